<?php

namespace App\Jobs\Shapes;

use App\Enums\Status;
use App\Jobs\Concerns\RecordsRun;
use App\Models\Podcast;
use App\Models\User;
use Carbon\Carbon;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Database\Eloquent\Collection as EloquentCollection;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use Illuminate\Support\Collection;

/**
 * Every shape SerializesModels gives a declared type, in one class shaped
 * like a real app's (Firefly III's DownloadExchangeRates holds
 * `private Collection $users = $userRepository->all()`):
 *
 * - $users: declared a plain Collection, holds an Eloquent collection, which
 *   SerializesModels queues as a ModelIdentifier (class, id list);
 * - $totals, $tags: plain collections (keyed, list), queued as the object;
 * - $nobody: an empty Eloquent collection (ModelIdentifier, class null);
 * - $maybe: a nullable collection holding null;
 * - $since: set only when the constructor is given a date, so it is
 *   uninitialised in the other job and PHP leaves it out;
 * - $podcasts: an array of models (travel whole: SerializesModels converts
 *   properties, not what they contain), $owner a nested model in an object;
 * - $status an enum, $podcast a nullable model.
 */
class ExchangeRatesJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    private Collection $users;
    public Collection $totals;
    public Collection $tags;
    public EloquentCollection $nobody;
    public ?Collection $maybe = null;
    private Carbon $since;
    public array $podcasts;
    public object $owner;
    public Status $status;
    public ?Podcast $podcast;

    public function __construct(?Carbon $since = null)
    {
        $this->users = User::query()->orderBy('id', 'desc')->get();
        $this->totals = collect(['EUR' => 1.5, 'USD' => 2]);
        $this->tags = collect(['rates', 'daily']);
        $this->nobody = User::query()->whereKey([])->get();
        if ($since !== null) {
            $this->since = $since->copy()->startOfDay();
        }
        $this->podcasts = Podcast::query()->whereKey([42])->get()->all();
        $this->owner = (object) ['user' => User::query()->find(1)];
        $this->status = Status::Active;
        $this->podcast = null;
    }

    public function handle()
    {
        $this->recordRun([
            'users' => $this->users->pluck('id')->all(),
            'since' => isset($this->since) ? $this->since->format('Y-m-d') : null,
        ]);
    }
}
