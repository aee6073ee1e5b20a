<?php

namespace App\Enums;

enum Suit
{
    case Hearts;
    case Spades;
}
