// Command argvdump is an exec handler for the security tests: it appends
// one JSON line to the file named by its first argument with its argv, its
// LARAWORKER_JOB_* environment and the bytes it read on stdin, and exits 0.
package main

import (
	"encoding/json"
	"io"
	"os"
	"strings"
)

type record struct {
	Argv  []string          `json:"argv"`
	Env   map[string]string `json:"env"`
	Stdin string            `json:"stdin"`
}

func main() {
	if len(os.Args) < 2 {
		os.Exit(2)
	}
	in, err := io.ReadAll(os.Stdin)
	if err != nil {
		os.Exit(1)
	}
	r := record{Argv: os.Args, Env: map[string]string{}, Stdin: string(in)}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "LARAWORKER_JOB_") {
			r.Env[k] = v
		}
	}
	line, err := json.Marshal(r)
	if err != nil {
		os.Exit(1)
	}
	f, err := os.OpenFile(os.Args[1], os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		os.Exit(1)
	}
	defer f.Close()
	if _, err := f.Write(append(line, '\n')); err != nil {
		os.Exit(1)
	}
}
