<?php

namespace App\Jobs\Routed;

use Illuminate\Contracts\Queue\ShouldBeUnique;

/**
 * A unique job: the bridge keeps it on PHP even when a route matches it.
 */
class UniqueReport extends BaseReport implements ShouldBeUnique
{
}
