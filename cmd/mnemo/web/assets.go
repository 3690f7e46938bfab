package web

import (
	"embed"
	"io/fs"
	"net/http"
)

// files are the page's assets, built into the binary: nothing is fetched
// at run time and there is no build step beyond go build.
//
//go:embed assets
var files embed.FS

// assetFS is files below assets/.
func assetFS() fs.FS {
	sub, err := fs.Sub(files, "assets")
	if err != nil {
		panic(err) // the embed pattern above guarantees the folder
	}
	return sub
}

// assetServer serves the assets; they change only with the binary, so a
// browser may keep them for an hour.
func assetServer() http.Handler {
	h := http.FileServerFS(assetFS())
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "max-age=3600")
		h.ServeHTTP(w, r)
	})
}

// asset serves one asset file at another path (the page at /).
func (s *Server) asset(name string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeFileFS(w, r, assetFS(), name)
	})
}
