// Command agency-mockllm serves the mockllm model server until SIGINT or
// SIGTERM, for running the real claude and codex CLIs offline:
//
//	agency-mockllm [-addr 127.0.0.1:0] [-portfile FILE] [-file hello.txt] [-content TEXT] [-final TEXT]
//
// It prints "LISTENING <port>" once ready and, with -portfile, writes the
// port to FILE (atomically, so a poller never reads a partial number).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/git-agency/git-agency/internal/mockllm"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "loopback `host:port` to listen on (port 0 picks a free one)")
	portfile := flag.String("portfile", "", "write the chosen port to `file`")
	var cfg mockllm.Config
	flag.StringVar(&cfg.File, "file", "", "file the tool call creates (default hello.txt)")
	flag.StringVar(&cfg.Content, "content", "", "its content (default \"hello from mock\\n\")")
	flag.StringVar(&cfg.Final, "final", "", "the final answer (default \"Done: wrote the file.\")")
	flag.DurationVar(&cfg.HangFor, "hang-for", 15*time.Minute, "how long /hang/ and /stall/ requests hang")
	flag.Parse()

	srv, err := mockllm.StartConfig(*addr, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "agency-mockllm:", err)
		os.Exit(1)
	}

	if *portfile != "" {
		tmp := filepath.Join(filepath.Dir(*portfile), "."+filepath.Base(*portfile)+".tmp")
		err := os.WriteFile(tmp, []byte(fmt.Sprint(srv.Port())), 0o644)
		if err == nil {
			err = os.Rename(tmp, *portfile)
		}

		if err != nil {
			fmt.Fprintln(os.Stderr, "agency-mockllm:", err)
			srv.Close()
			os.Exit(1)
		}
	}

	fmt.Println("LISTENING", srv.Port())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	srv.Close()
}
