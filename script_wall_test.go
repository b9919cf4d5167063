package gitagency_test

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// treehash PATH...: one line per file, directory and link under each PATH
// (a missing PATH is a line too): its path, mode and a hash of its
// content or target. Compare two runs to prove nothing changed.
func cmdTreeHash(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: treehash PATH...")
	}
	var b strings.Builder
	for _, root := range args {
		root = ts.MkAbs(root)
		if _, err := os.Lstat(root); err != nil {
			fmt.Fprintf(&b, "%s missing\n", root)
			continue
		}
		ts.Check(filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			fi, err := d.Info()
			if err != nil {
				return err
			}
			sum := ""
			switch {
			case fi.Mode()&fs.ModeSymlink != 0:
				t, _ := os.Readlink(p)
				sum = "-> " + t
			case fi.Mode().IsRegular():
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				sum = fmt.Sprintf("%x", sha256.Sum256(data))
			}
			fmt.Fprintf(&b, "%s %v %s\n", p, fi.Mode(), sum)
			return nil
		}))
	}
	ts.Stdout().Write([]byte(b.String()))
}

// unixserve PATH: serve "pong" over HTTP on a unix socket at PATH until
// the script ends (a stand-in for a Docker daemon's socket, an ssh agent).
func cmdUnixServe(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: unixserve PATH")
	}
	ln, err := net.Listen("unix", ts.MkAbs(args[0]))
	ts.Check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("pong\n"))
	})}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
}
