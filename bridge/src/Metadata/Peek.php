<?php

namespace Laraworker\Bridge\Metadata;

use ReflectionMethod;
use ReflectionObject;
use ReflectionProperty;

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

    public static function hasProp($object, string $name): bool
    {
        return property_exists($object, $name);
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

    /**
     * Whether the class declares (or inherits) $method.
     */
    public static function has($objectOrClass, string $method): bool
    {
        return method_exists($objectOrClass, $method);
    }

    /**
     * Sets a property whatever its visibility.
     */
    public static function set($object, string $name, $value): void
    {
        $property = new ReflectionProperty($object, $name);
        $property->setAccessible(true);
        $property->setValue($object, $value);
    }
}
