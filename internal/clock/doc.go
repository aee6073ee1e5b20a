// Package clock is time as a long-running loop reads it: the current time,
// timers, tickers and delayed calls. System is the real clock; a Fake
// moves only when a test advances it, so a test that needs "a minute
// later" or "after the next lease tick" says so instead of sleeping.
package clock
