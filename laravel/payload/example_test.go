package payload_test

import (
	"fmt"

	"github.com/laraworker/laraworker/laravel/payload"
	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// Read a payload as Laravel's database queue stores it, then decode its
// PHP-serialized command into a Go struct.
func ExampleParse() {
	raw := []byte(`{"uuid":"4f1c1e3a-2b7e-4c55-9a43-0f3b2a3f1d10","displayName":"App\\Jobs\\ResizeImage","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":"10","timeout":120,"retryUntil":null,"data":{"commandName":"App\\Jobs\\ResizeImage","command":"O:20:\"App\\Jobs\\ResizeImage\":2:{s:7:\"imageId\";i:42;s:7:\"quality\";s:2:\"hd\";}"}}`)
	p, err := payload.Parse(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	cmd, err := payload.DecodeCommand(p, nil) // nil: the command is not encrypted
	if err != nil {
		fmt.Println(err)
		return
	}
	var job struct {
		ImageID int64  `php:"imageId"`
		Quality string `php:"quality"`
	}
	if err := cmd.Decode(&job); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.DisplayName, *p.MaxTries, *p.Timeout, *p.Backoff)
	fmt.Println(job.ImageID, job.Quality)
	// Output:
	// App\Jobs\ResizeImage 3 120 10
	// 42 hd
}

// Build the payload `ResizeImage::dispatch(42)` writes, ready to push onto
// a jobs table (or a Redis list) for `php artisan queue:work` to run.
func ExampleBuildObjectPayload() {
	cmd := phpserialize.Object(`App\Jobs\ResizeImage`,
		phpserialize.Public("imageId", phpserialize.Int(42)))
	raw, err := payload.BuildObjectPayload(cmd, payload.BuildOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	p, err := payload.Parse(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.DisplayName)
	fmt.Println(p.Job)
	fmt.Println(p.Data.Command)
	// Output:
	// App\Jobs\ResizeImage
	// Illuminate\Queue\CallQueuedHandler@call
	// O:20:"App\Jobs\ResizeImage":1:{s:7:"imageId";i:42;}
}

// A key the app adds to every payload (Queue::createPayloadUsing), read
// after `php artisan queue:retry` re-encoded the payload: its empty map
// came back as [].
func ExampleDecodeJSON() {
	p, _ := payload.Parse([]byte(`{"uuid":"u","displayName":"App\\Jobs\\Sync","job":"x","data":{},"app:meta":{"tenant":"acme","flags":[]}}`))
	var meta struct {
		Tenant string          `json:"tenant"`
		Flags  map[string]bool `json:"flags"`
	}
	if err := payload.DecodeJSON(p.Extra["app:meta"], &meta); err != nil {
		fmt.Println(err)
	}
	fmt.Println(meta.Tenant, len(meta.Flags), meta.Flags != nil)
	// Output: acme 0 true
}
