//go:build !unix

package render

// lock: concurrent runs are not serialised where flock is unknown.
func lock(string) (unlock func()) { return func() {} }
