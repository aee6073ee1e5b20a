package payload

import (
	"testing"

	"github.com/laraworker/laraworker/laravel/phpserialize"
)

// readProps reads in one pass what optionalProp reads name by name: the
// value by short name whatever the visibility, nil when absent or when
// two properties share the name, nothing from a value that is no object.
func TestReadPropsAgreesWithOptionalProp(t *testing.T) {
	queue := phpserialize.String("high")
	objects := map[string]*phpserialize.Value{
		"public and mangled": phpserialize.Object(`App\Jobs\X`,
			phpserialize.Public("queue", queue),
			phpserialize.Protected("connection", phpserialize.String("redis")),
			phpserialize.Private(`App\Jobs\X`, "delay", phpserialize.Int(5)),
			phpserialize.Public("chained", phpserialize.Null()),
			phpserialize.Entry{Key: phpserialize.IntKey(7), Value: phpserialize.Int(1)},
			phpserialize.Public("other", phpserialize.Int(1))),
		"one name twice": phpserialize.Object(`App\Jobs\Y`,
			phpserialize.Private(`App\Jobs\Base`, "queue", queue),
			phpserialize.Protected("queue", phpserialize.String("low")),
			phpserialize.Public("batchId", phpserialize.String("b"))),
		"one name three times": phpserialize.Object(`App\Jobs\Z`,
			phpserialize.Public("middleware", phpserialize.Null()),
			phpserialize.Protected("middleware", phpserialize.Null()),
			phpserialize.Private(`App\Jobs\Z`, "middleware", phpserialize.Null())),
		"empty":     phpserialize.Object(`App\Jobs\E`),
		"no object": phpserialize.String("O:1:"),
	}
	for name, obj := range objects {
		t.Run(name, func(t *testing.T) {
			got := make([]*phpserialize.Value, len(queueableProps))
			readProps(obj, queueableProps[:], got)
			for i, prop := range queueableProps {
				if want := optionalProp(obj, prop); got[i] != want {
					t.Errorf("%s: readProps %v, optionalProp %v", prop, got[i], want)
				}
			}
		})
	}
}
