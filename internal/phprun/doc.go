// Package phprun runs one of laraworker's own PHP scripts with a Laravel
// app's PHP: the script on standard input (never a file PHP could pick up
// later, never argv), a time limit after which the whole process group is
// killed (whatever the app's boot started included), stdout kept whole and
// stderr cut to its first 64 KiB.
package phprun
