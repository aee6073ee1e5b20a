//go:build !linux

package bench

import "os"

// dropFromPageCache does nothing here: the bench's memory figures are
// Linux's (/proc).
func dropFromPageCache(*os.File) {}
