package a

import (
	"io"
	"os"
)

func Read(r io.Reader) ([]byte, error) { return io.ReadAll(r) }

func Clean(dir string) error {
	return os.RemoveAll(dir) //safety:allow remove dir is a temporary folder Clean's caller made
}

func Message(msg string) string { return msg[:300] }
