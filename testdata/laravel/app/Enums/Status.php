<?php

namespace App\Enums;

enum Status: string
{
    case Active = 'active';
    case Archived = 'archived';
}
