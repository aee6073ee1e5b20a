<?php

namespace Laraworker\Bridge\Metadata;

use ReflectionMethod;
use ReflectionObject;

/**
 * Reads what Laravel keeps protected (middleware settings, a store's
 * table, a limiter's cache) and calls Laravel's own protected methods
 * (key builders), so that every value the bridge records is the one the
 * app's Laravel version computes, not a copy of its rules.
 */
final class Peek
{
    /**
     * A property of $object, whatever its visibility; $default when the
     * class (this Laravel version) has no such property.
     */
    public static function prop($object, string $name, $default = null)
    {
        $class = new ReflectionObject($object);
        while ($class !== false) {
            if ($class->hasProperty($name)) {
                $property = $class->getProperty($name);
                if ($property->isStatic()) {
                    return $default;
                }
                $property->setAccessible(true);
                if (method_exists($property, 'isInitialized') && ! $property->isInitialized($object)) {
                    return $default;
                }

                return $property->getValue($object);
            }
            $class = $class->getParentClass();
        }

        return $default;
    }

    /**
     * Calls a method of $object whatever its visibility.
     */
    public static function call($object, string $method, ...$args)
    {
        $m = new ReflectionMethod($object, $method);
        $m->setAccessible(true);

        return $m->isStatic() ? $m->invoke(null, ...$args) : $m->invoke($object, ...$args);
    }
}
