package pulse

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
)

// phpEntryClass stands in for Laravel\Pulse\Entry with its declarations as
// Pulse 1.x declares them (the two protected properties, then the
// constructor's promoted ones) and the methods that add aggregations:
// what serialize() writes depends on nothing else.
const phpEntryClass = `namespace Laravel\Pulse;
class Entry {
    protected array $aggregations = [];
    protected bool $onlyBuckets = false;
    public function __construct(public int $timestamp, public string $type, public string $key, public ?int $value = null) {}
    public function add(string $aggregation): static { $this->aggregations[] = $aggregation; return $this; }
    public function onlyBuckets(): static { $this->onlyBuckets = true; return $this; }
    public function aggregations(): array { return $this->aggregations; }
    public function isOnlyBuckets(): bool { return $this->onlyBuckets; }
}
`

// TestEntrySerializedAsPHP: the stream's data field is, byte for byte,
// what PHP's serialize() writes for the same Laravel\Pulse\Entry, and PHP
// unserializes Go's bytes into an entry with the same properties (what
// pulse:work reads).
func TestEntrySerializedAsPHP(t *testing.T) {
	entries := []Entry{
		{Timestamp: 1796548321, Type: "processing", Key: "database:default", Aggregations: []string{aggCount}, OnlyBuckets: true},
		{Timestamp: 1796548322, Type: "slow_job", Key: `App\Jobs\Rapport€ "quoted"`, Value: value(2500), Aggregations: []string{aggMax, aggCount}},
		{Timestamp: 0, Type: "", Key: "", Value: value(-1)},
	}
	var lines []string
	for _, e := range entries {
		b, err := json.Marshal(map[string]any{"ts": e.Timestamp, "type": e.Type, "key": e.Key, "value": e.Value, "aggs": e.Aggregations, "only": e.OnlyBuckets})
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Serialized()
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, string(b)+"\t"+base64.StdEncoding.EncodeToString(got))
	}
	out := runPHP(t, phpEntryClass+`namespace Main;`+readLines+`
foreach ($lines as $l) {
    [$spec, $go] = explode("\t", $l);
    $s = json_decode($spec, true);
    $e = new \Laravel\Pulse\Entry($s['ts'], $s['type'], $s['key'], $s['value']);
    foreach ((array) $s['aggs'] as $a) { $e->add($a); }
    if ($s['only']) { $e->onlyBuckets(); }
    $back = unserialize(base64_decode($go));
    $same = $back instanceof \Laravel\Pulse\Entry && $back == $e && $back->aggregations() === $e->aggregations() && $back->isOnlyBuckets() === $e->isOnlyBuckets();
    echo base64_encode(serialize($e)), "\t", $same ? "same" : "differs", "\n";
}`, lines)
	for i, e := range entries {
		got, _ := e.Serialized()
		php, verdict, _ := strings.Cut(out[i], "\t")
		want, _ := base64.StdEncoding.DecodeString(php)
		if string(got) != string(want) {
			t.Errorf("entry %d:\n Go  %q\n PHP %q", i, got, want)
		}
		if verdict != "same" {
			t.Errorf("entry %d: PHP unserializes Go's bytes into another entry", i)
		}
	}
}
