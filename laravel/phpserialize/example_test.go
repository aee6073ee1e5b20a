package phpserialize_test

import (
	"fmt"
	"time"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Date reads a serialized DateTime through the Decoder hook.
type Date struct{ time.Time }

func (d *Date) DecodePHP(v *phpserialize.Value) (err error) {
	d.Time, err = phpserialize.Time(v)
	return err
}

// ProcessPodcast mirrors the properties of the PHP class; protected and
// private properties are matched by their short name.
type ProcessPodcast struct {
	PodcastID int64    `php:"podcastId"`
	Title     string   `php:"title"`
	Tags      []string `php:"tags"`
	Published Date     `php:"published"`
}

func ExampleDecode() {
	// serialize(new App\Jobs\ProcessPodcast) in PHP 8.2: a public, a
	// protected and a private property, and a DateTimeImmutable.
	in := []byte("O:23:\"App\\Jobs\\ProcessPodcast\":4:{s:9:\"podcastId\";i:4711;" +
		"s:8:\"\x00*\x00title\";s:9:\"Episode 1\";" +
		"s:29:\"\x00App\\Jobs\\ProcessPodcast\x00tags\";a:2:{i:0;s:5:\"audio\";i:1;s:4:\"news\";}" +
		"s:9:\"published\";O:17:\"DateTimeImmutable\":3:{s:4:\"date\";s:26:\"2026-11-29 10:00:00.000000\";" +
		"s:13:\"timezone_type\";i:3;s:8:\"timezone\";s:3:\"UTC\";}}")
	v, err := phpserialize.Unserialize(in)
	if err != nil {
		fmt.Println(err)
		return
	}
	var job ProcessPodcast
	if err := phpserialize.Decode(v, &job); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.Class)
	fmt.Println(job.PodcastID, job.Title, job.Tags, job.Published.Format(time.RFC3339))
	// Output:
	// App\Jobs\ProcessPodcast
	// 4711 Episode 1 [audio news] 2026-11-29T10:00:00Z
}

func ExampleSerialize() {
	cmd := phpserialize.Object(`App\Jobs\SendMail`,
		phpserialize.Public("to", phpserialize.String("ada@example.com")),
		phpserialize.Protected("retries", phpserialize.List(phpserialize.Int(1), phpserialize.Int(5))),
		phpserialize.Private(`App\Jobs\SendMail`, "draft", phpserialize.Bool(false)),
	)
	out, err := phpserialize.Serialize(cmd)
	if err != nil {
		fmt.Println(err)
		return
	}
	// The bytes PHP 8.2 writes for the same object; %q shows the NUL bytes
	// of the protected and private property names.
	fmt.Printf("%q\n", out)
	// Output:
	// "O:17:\"App\\Jobs\\SendMail\":3:{s:2:\"to\";s:15:\"ada@example.com\";s:10:\"\x00*\x00retries\";a:2:{i:0;i:1;i:1;i:5;}s:24:\"\x00App\\Jobs\\SendMail\x00draft\";b:0;}"
}
