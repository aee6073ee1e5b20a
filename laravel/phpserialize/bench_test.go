package phpserialize

import "testing"

// BenchmarkUnserializeJobCommand decodes the ~2 KB job fixture.
func BenchmarkUnserializeJobCommand(b *testing.B) {
	in := readFixture(b, "job-command.ser")
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Unserialize(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSerializeJobCommand(b *testing.B) {
	v, err := Unserialize(readFixture(b, "job-command.ser"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Serialize(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeJobCommand(b *testing.B) {
	v, err := Unserialize(readFixture(b, "job-command.ser"))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var job podcastJob
		if err := Decode(v, &job); err != nil {
			b.Fatal(err)
		}
	}
}
