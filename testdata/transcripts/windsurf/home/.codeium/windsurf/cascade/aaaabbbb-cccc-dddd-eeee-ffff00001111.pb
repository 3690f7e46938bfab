encrypted-bytes
