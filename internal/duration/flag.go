package duration

import "time"

// Flag is a flag.Value for a duration read with Parse (flag.Duration reads
// with time.ParseDuration, whose error does not tell syntax from range).
type Flag struct{ D *time.Duration }

func (f Flag) String() string {
	if f.D == nil {
		return ""
	}
	return f.D.String()
}

func (f Flag) Set(s string) error {
	d, err := Parse(s)
	if err != nil {
		return err
	}
	*f.D = d
	return nil
}
