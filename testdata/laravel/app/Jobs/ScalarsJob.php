<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;

/**
 * Scalars and nested arrays: ints, floats (incl. exponent form), unicode and
 * slashes in strings, booleans, null, lists, maps and empty arrays.
 */
class ScalarsJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public function __construct(
        public int $podcastId = 42,
        public int $negative = -7,
        public float $ratio = 0.1,
        public float $huge = 1.0e25,
        public string $title = 'Héllo / wörld "quoted" ✓',
        public bool $flag = true,
        public ?string $nothing = null,
        public array $tags = ['news', 'tech'],
        public array $meta = ['nested' => ['x' => 1, 'y' => [1.25, 'z']], 'empty' => [], 7 => 'int-key'],
    ) {
    }

    public function handle()
    {
        $this->recordRun([
            'podcastId' => $this->podcastId,
            'negative' => $this->negative,
            'ratio' => $this->ratio,
            'huge' => $this->huge,
            'title' => $this->title,
            'flag' => $this->flag,
            'nothing' => $this->nothing,
            'tags' => $this->tags,
            'meta' => $this->meta,
        ]);
    }
}
