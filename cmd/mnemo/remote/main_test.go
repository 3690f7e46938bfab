package remote_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"testing"

	"mnemo/engine/enginetest"
)

// TestMain puts the tests' temporary folders on a RAM file system (see
// enginetest.RAMTempDir). Started with $MNEMO_REMOTE_PROBE set to a socket
// path, the test binary is instead a client of another user (see
// TestServerRefusesForeignPeer): it sends one status request there and
// prints the answer.
func TestMain(m *testing.M) {
	if path := os.Getenv("MNEMO_REMOTE_PROBE"); path != "" {
		c, err := net.Dial("unix", path)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(0)
		}
		fmt.Fprintln(c, `{"op":"status"}`)
		line, _ := bufio.NewReader(c).ReadString('\n')
		fmt.Print(line)
		os.Exit(0)
	}
	enginetest.Main(m)
}
