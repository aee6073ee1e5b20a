<?php

namespace App\Jobs;

use App\Jobs\Concerns\RecordsRun;
use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Foundation\Bus\Dispatchable;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use App\Enums\Priority;
use App\Enums\Status;
use App\Enums\Suit;
use Carbon\Carbon;
use Carbon\CarbonImmutable;
use DateTimeImmutable;

/**
 * PHP 8.1 enums (string-backed, int-backed, pure) and date objects, all with fixed
 * values so the serialized form is reproducible.
 */
class EnumsDatesJob implements ShouldQueue
{
    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels, RecordsRun;

    public Status $status;

    public Priority $priority;

    public Suit $suit;

    public Carbon $carbon;

    public CarbonImmutable $carbonImmutable;

    public DateTimeImmutable $dateTime;

    public function __construct()
    {
        $this->status = Status::Archived;
        $this->priority = Priority::High;
        $this->suit = Suit::Spades;
        $this->carbon = Carbon::parse('2024-02-29 13:14:15.123456', 'UTC');
        $this->carbonImmutable = CarbonImmutable::parse('2024-07-01 08:00:00', 'Europe/Amsterdam');
        $this->dateTime = new DateTimeImmutable('2001-02-03T04:05:06+02:00');
    }

    public function handle()
    {
        $this->recordRun([
            'status' => $this->status->value,
            'priority' => $this->priority->value,
            'suit' => $this->suit->name,
            'carbon' => $this->carbon->format('Y-m-d\TH:i:s.uP'),
            'carbonTimezone' => $this->carbon->getTimezone()->getName(),
            'carbonImmutable' => $this->carbonImmutable->format('Y-m-d\TH:i:s.uP'),
            'carbonImmutableTimezone' => $this->carbonImmutable->getTimezone()->getName(),
            'dateTime' => $this->dateTime->format('Y-m-d\TH:i:s.uP'),
        ]);
    }
}
