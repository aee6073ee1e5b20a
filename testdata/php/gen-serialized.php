<?php
// Writes testdata/serialized/*.ser: raw serialize() output of PHP 8.2 for the
// cases the Go codec in phpserialize/ must reproduce byte for byte.
// Usage: php testdata/php/gen-serialized.php   (pure PHP, no Laravel needed)

declare(strict_types=1);

namespace Fixtures {
    class Base
    {
        public $pub = 'p';
        protected $prot = 'q';
        private $secret = 'base-secret';
    }

    class Child extends Base
    {
        private $secret = 'child-secret';
        public $own = 1;
    }

    class Typed
    {
        public int $never;
        public ?string $maybe;
        public int $set = 3;
        protected array $list;
    }

    class Legacy implements \Serializable
    {
        public $data;

        public function __construct($data = null)
        {
            $this->data = $data;
        }

        public function serialize()
        {
            return serialize($this->data);
        }

        public function unserialize($s)
        {
            $this->data = unserialize($s);
        }
    }

    class Opaque implements \Serializable
    {
        public function serialize()
        {
            return "raw;}\"{body";
        }

        public function unserialize($s)
        {
        }
    }

    enum Suit: string
    {
        case Hearts = 'H';
        case Spades = 'S';
    }

    enum Status
    {
        case Active;
        case Archived;
    }
}

// A stand-in for a real Laravel job (same class names and property layout as
// Laravel 11 SerializesModels output) so the fixture needs no framework.
namespace Illuminate\Contracts\Database {
    class ModelIdentifier
    {
        public $class;
        public $id;
        public $relations;
        public $connection;
        public $collectionClass;

        public function __construct($class, $id, array $relations, $connection)
        {
            $this->class = $class;
            $this->id = $id;
            $this->relations = $relations;
            $this->connection = $connection;
        }
    }
}

namespace App\Jobs {
    use Illuminate\Contracts\Database\ModelIdentifier;

    class ProcessPodcast
    {
        public $podcastId;
        protected $podcast;
        private $apiToken;
        public $tags;
        public $options;
        public $connection;
        public $queue;
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
        public $tries = 3;
        public $timeout = 120.5;
        public $batchId;

        public function __construct()
        {
            $this->podcastId = 4711;
            $this->podcast = new ModelIdentifier('App\\Models\\Podcast', 4711, ['episodes', 'episodes.guests', 'owner'], 'mysql');
            $this->apiToken = "tok\0en-\xff-\u{1F399}";
            $this->tags = ['audio', 'transcode', 'podcast:4711', "quote\";}"];
            $this->options = ['bitrate' => 192, 'normalize' => true, 'gain' => -3.5, 'format' => 'mp3', 'chapters' => [0 => 'Intro', 90 => 'Guest', 1800 => 'Outro']];
            $this->connection = 'database';
            $this->queue = 'podcasts';
            $this->delay = 30;
            $this->afterCommit = false;
            $this->batchId = '9a1c3e52-2f6f-4a8e-8d1c-3c8f2b0d7e11';
            $this->options['headers'] = ['X-Request-Id' => 'c0ffee-1234', 'User-Agent' => 'laraworker-fixture/1.0', 'Accept' => 'audio/mpeg'];
            $next = new SendPodcastNotification($this->podcast);
            $this->chained = [serialize($next), serialize(new SendPodcastNotification(new ModelIdentifier('App\\Models\\User', [1, 2, 3], [], 'mysql')))];
        }
    }

    class SendPodcastNotification
    {
        public $podcast;
        public $channels = ['mail', 'slack'];
        public $connection = 'database';
        public $queue = 'notifications';

        public function __construct($podcast)
        {
            $this->podcast = $podcast;
        }
    }
}

namespace {
    use Fixtures\Base;
    use Fixtures\Child;
    use Fixtures\Legacy;
    use Fixtures\Opaque;
    use Fixtures\Status;
    use Fixtures\Suit;
    use Fixtures\Typed;

    error_reporting(E_ALL & ~E_DEPRECATED);
    ini_set('serialize_precision', '-1');

    $dir = dirname(__DIR__) . '/serialized';
    if (!is_dir($dir)) {
        mkdir($dir, 0777, true);
    }
    foreach (glob($dir . '/*') as $old) {
        unlink($old);
    }

    function put(string $name, string $bytes): void
    {
        global $dir;
        file_put_contents("$dir/$name", $bytes);
    }

    function ser(string $name, $value): void
    {
        put("$name.ser", serialize($value));
    }

    // Objects and visibility.
    ser('visibility', new Child());
    ser('visibility-base', new Base());
    ser('typed-uninitialized', new Typed());
    $numeric = new stdClass();
    $numeric->{'0'} = 'zero';
    $numeric->{'123'} = 'x';
    $numeric->{'-5'} = 'neg';
    ser('numeric-props', $numeric);
    ser('object-from-list', (object) ['a', 'b']);
    $ao = new ArrayObject([3 => 'three', 'k' => 'v']);
    $ao->dyn = 1;
    ser('arrayobject', $ao);
    ser('serializable-opaque', new Opaque());
    // Serializable bodies that hold serialized data share PHP's slot numbers:
    // the r:2 inside and after the C: body both point at $shared.
    $shared = new stdClass();
    $shared->x = 1;
    ser('serializable-nested', [$shared, new Legacy([$shared, 'z', $shared]), $shared, 'w']);
    $x = 5;
    ser('serializable-then-ref', [new Legacy(['q', 'r']), &$x, &$x]);

    // Enums.
    ser('enum-backed', Suit::Hearts);
    ser('enum-pure', Status::Archived);
    ser('enum-twice', [Suit::Hearts, Suit::Spades, Suit::Hearts, Status::Active]);

    // References.
    $o = new stdClass();
    $o->name = 'shared';
    ser('ref-shared-object', ['first' => $o, 'second' => $o, 'list' => [$o]]);
    $v = 'scalar';
    ser('ref-scalar', ['a' => &$v, 'b' => 1, 'c' => &$v]);
    $arr = [1, 2];
    ser('ref-array', ['x' => &$arr, 'y' => &$arr, 'z' => $arr]);
    $self = new stdClass();
    $self->name = 'me';
    $self->self = $self;
    ser('ref-self-object', $self);
    $a = [];
    $a[] = &$a;
    ser('ref-self-array', $a);

    // Edits: *-before.ser is decoded in Go, edited, serialized again and
    // compared with *-after.ser, which PHP builds directly in edited form.
    $t = new stdClass();
    $t->v = 1;
    $before = new stdClass();
    $before->a = $t;
    $before->b = $t;
    ser('edit-object-before', $before);
    $after = new stdClass();
    $after->inserted = [1, 2, 3];
    $after->a = $t;
    $after->b = $t;
    ser('edit-object-after', $after);

    $s = 'v';
    ser('edit-alias-before', ['p' => &$s, 'q' => &$s]);
    unset($s);
    $s = 'v';
    ser('edit-alias-after', ['n' => [true, null], 'p' => &$s, 'q' => &$s]);
    unset($s);

    $me = new stdClass();
    $me->self = $me;
    ser('edit-self-before', $me);
    $me2 = new stdClass();
    $me2->tag = Suit::Spades;
    $me2->self = $me2;
    ser('edit-self-after', $me2);

    // Strings.
    ser('strings', [
        'empty' => '',
        'utf8' => "h\u{e9}llo w\u{f6}rld \u{1F600}",
        'quotes' => "it's \"quoted\"",
        'terminator' => "a\";}b",
        'nul' => "a\0b\0",
        'crlf' => "line1\r\nline2\n",
        'invalid-utf8' => "\xff\xfe\xc3",
        'backslash-escape' => '\x41',
        'windows-path' => 'C:\new',
        'serialized-inside' => 's:3:"abc";',
    ]);
    ser('string-nul-only', "\0");

    // The 1 MiB string: Go rebuilds it (bytes 0..255 repeated 4096 times) and
    // checks its serialized form against this length and hash.
    $pattern = '';
    for ($i = 0; $i < 256; $i++) {
        $pattern .= chr($i);
    }
    $big = serialize(str_repeat($pattern, 4096));
    put('big-string.json', json_encode(['length' => strlen($big), 'sha256' => hash('sha256', $big)], JSON_PRETTY_PRINT) . "\n");

    // Arrays.
    ser('arrays', [
        'empty' => [],
        'list' => ['a', 'b', 'c'],
        'sparse' => [0 => 'a', 5 => 'f', 2 => 'c'],
        'negative' => [-1 => 'm1', -9223372036854775807 - 1 => 'min'],
        'max' => [PHP_INT_MAX => 'max'],
        'mixed' => ['x' => 1, 10 => 2, 'y' => 3, 11 => 4],
        'nested' => [[[]]],
    ]);

    // Numbers.
    $floats = [
        0.1, 0.1 + 0.2, 1e15, 1e16, 1e17, 1e100, 1.5e-7, -0.0, 0.0, INF, -INF, NAN,
        PHP_FLOAT_MAX, PHP_FLOAT_MIN, PHP_FLOAT_EPSILON, 5e-324, 2.0, 100.0, 0.0001,
        0.00001, 0.5, -1.5, 123456789012345678.0, 1e25, 1.0e-300, 120.5, -3.5, 1/3,
    ];
    for ($e = -12; $e <= 25; $e++) {
        $floats[] = (float) 10 ** $e;
        $floats[] = 1.25 * 10 ** $e;
        $floats[] = -7.123456789 * 10 ** $e;
    }
    mt_srand(20240611);
    for ($i = 0; $i < 2000; $i++) {
        $bytes = '';
        for ($j = 0; $j < 8; $j++) {
            $bytes .= chr(mt_rand(0, 255));
        }
        $floats[] = unpack('E', $bytes)[1];
    }
    ser('numbers', [PHP_INT_MAX, PHP_INT_MIN, 0, -1, 42, ...array_slice($floats, 0, 28)]);
    ser('floats-example', [1e15, 1e16, 1e17, 0.1 + 0.2, 1.5e-7, -0.0, 1e25, 2.0, 0.0001, 100.0]);
    $manifest = [];
    foreach ($floats as $f) {
        $manifest[] = ['php' => substr(serialize($f), 2, -1), 'bits' => bin2hex(pack('E', $f))];
    }
    put('floats.json', str_replace('},{', "},\n{", json_encode($manifest)) . "\n");

    // What unserialize() accepts after "d:", and the float it yields.
    $texts = ['1', '-1', '+1', '1.', '.5', '-.5', '+.5', '.', '1.5e3', '1.5E+3', '1e-3', '1E5', '1e', 'e5', '.e5',
        '1.0E+25', '0.10', '00.1', '1e400', '-1e400', '1e-400', 'NAN', 'INF', '-INF', '+INF', 'nan', 'inf', '-NAN',
        '0x1A', '1_000', ' 1', '1 ', '', '-', '+', '-0', '-0.0', '1.5e+', '1.5e-07', '123456789012345678901234567890',
        '0.1000000000000000055511151231257827', '2.2250738585072011e-308', '4.9e-324', '2e-324', '1.7976931348623159e308'];
    $parse = [];
    foreach ($texts as $text) {
        $v = @unserialize("d:$text;");
        $parse[] = ['text' => $text, 'ok' => is_float($v), 'bits' => is_float($v) ? bin2hex(pack('E', $v)) : ''];
    }
    put('float-parse.json', str_replace('},{', "},\n{", json_encode($parse)) . "\n");

    // Dates: DateTime and DateTimeImmutable with each timezone type (3: an
    // identifier, 1: an offset, 2: an abbreviation), and the instant and
    // offset PHP itself reads from them, for phpserialize.Time.
    $dates = [
        'identifier' => new DateTimeImmutable('2026-11-29 13:45:07.123456', new DateTimeZone('Europe/Berlin')),
        'summer' => new DateTime('2026-07-01 09:00:00', new DateTimeZone('America/New_York')),
        'offset' => new DateTime('2026-01-02 03:04:05.000001', new DateTimeZone('+05:30')),
        'abbreviation' => new DateTime('2026-07-04 12:00:00 EDT'),
        'utc' => new DateTimeImmutable('2000-01-01 00:00:00', new DateTimeZone('UTC')),
    ];
    ser('dates', $dates);
    $instants = [];
    foreach ($dates as $k => $d) {
        $instants[$k] = ['unix' => $d->getTimestamp(), 'micro' => (int) $d->format('u'), 'offset' => $d->getOffset()];
    }
    put('dates.json', json_encode($instants, JSON_PRETTY_PRINT) . "\n");

    // A realistic queued job command (about 2 KB).
    ser('job-command', new App\Jobs\ProcessPodcast());

    echo "wrote ", count(glob($dir . '/*')), " files to $dir\n";
}
