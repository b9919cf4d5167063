package gitagency_test

import (
	"net"
	"net/http"

	"github.com/rogpeppe/go-internal/testscript"
)

// httpserve VAR: serve "pong" over HTTP on a free local port until the
// script ends; VAR is set to the URL.
func cmdHTTPServe(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: httpserve VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("pong\n"))
	})}
	go srv.Serve(ln)
	ts.Defer(func() { srv.Close() })
	ts.Setenv(args[0], "http://"+ln.Addr().String()+"/")
}
