<?php

namespace App\Jobs\Routed;

class MonthlyReport extends BaseReport
{
}
