package phpclass

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/laraworker/laraworker/internal/phparray"
	"github.com/laraworker/laraworker/internal/phprun"
)

// reflectScript boots the app and prints the classes (see its header).
//
//go:embed php/reflect-classes.php
var reflectScript []byte

// Options say which app and which classes.
type Options struct {
	// AppDir is the app's root (the folder holding artisan).
	AppDir string
	// EnvFile is the app's .env; empty: AppDir/.env when there is one.
	EnvFile string
	// PHP is the php binary; empty: php on PATH.
	PHP string
	// Classes are the classes to read; empty: those the bridge routes,
	// or every job class with AllJobs.
	Classes []string
	// AllJobs reads every job class of the app when Classes is empty: the
	// concrete ShouldQueue classes under app/ and the psr-4 folders of
	// the app's composer.json, found by the app's PHP (App.Skipped says
	// what it left out), each with the bridge routes that match it.
	AllJobs bool
	// Environ is the environment PHP runs in (nil: this process's).
	Environ []string
	// Timeout bounds the run (default 30s).
	Timeout time.Duration
}

// ErrNoPHP is returned when there is no php to run.
var ErrNoPHP = errors.New("phpclass: php not found on PATH (give --php)")

// Reflect boots the app with its PHP and reads the classes.
func Reflect(ctx context.Context, opts Options) (*App, error) {
	appDir, err := filepath.Abs(opts.AppDir)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(appDir, "artisan")); err != nil {
		return nil, fmt.Errorf("phpclass: %s holds no artisan: not a Laravel app", opts.AppDir)
	}
	envFile := opts.EnvFile
	if envFile == "" {
		if _, err := os.Stat(filepath.Join(appDir, ".env")); err == nil {
			envFile = filepath.Join(appDir, ".env")
		}
	} else if envFile, err = filepath.Abs(envFile); err != nil {
		return nil, err
	}
	php := opts.PHP
	switch php {
	case "off":
		return nil, errors.New("phpclass: reading classes needs the app's php (--php off turns it off)")
	case "":
		if php, err = exec.LookPath("php"); err != nil {
			return nil, ErrNoPHP
		}
	}
	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	out, err := phprun.Run(ctx, phprun.Script{
		PHP:     php,
		Source:  phprun.WithAppBoot(reflectScript),
		Args:    append([]string{appDir, envFile}, scriptClasses(opts)...),
		Dir:     appDir,
		Env:     environ,
		Timeout: opts.Timeout,
	})
	var exit *phprun.ExitError
	switch {
	case errors.Is(err, phprun.ErrTimeout):
		return nil, fmt.Errorf("phpclass: %s did not finish reading the classes of %s: %w", php, appDir, err)
	case errors.As(err, &exit):
		return nil, fmt.Errorf("phpclass: booting the app in %s with %s failed (%v): %s", appDir, php, exit.Err, exit.Message())
	case err != nil:
		return nil, err
	}
	app, err := decodeApp(phprun.LastLine(out))
	if err != nil {
		return nil, fmt.Errorf("phpclass: %s printed no readable answer for %s: %v", php, appDir, err)
	}
	return app, nil
}

// decodeApp reads the script's answer, written by json_encode: an empty
// array is [] whether it is a list or a map (methods, traits, stores).
func decodeApp(line []byte) (*App, error) {
	var app App
	if err := phparray.Unmarshal(line, &app); err != nil {
		return nil, err
	}
	return &app, nil
}

// scriptClasses are the script's class arguments: the classes, or
// --all-jobs.
func scriptClasses(opts Options) []string {
	if len(opts.Classes) == 0 && opts.AllJobs {
		return []string{"--all-jobs"}
	}
	return opts.Classes
}

// Class returns the reflected class named name (PHP class names are
// case-insensitive), nil when absent.
func (a *App) Class(name string) *Class {
	for i := range a.Classes {
		if equalFoldClass(a.Classes[i].Name, name) {
			return &a.Classes[i]
		}
	}
	return nil
}

func equalFoldClass(a, b string) bool {
	return len(a) > 0 && len(b) > 0 && (a == b || lowerClass(a) == lowerClass(b))
}

func lowerClass(s string) string {
	b := []byte(s)
	if len(b) > 0 && b[0] == '\\' {
		b = b[1:]
	}
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 32
		}
	}
	return string(b)
}
