<?php

namespace Laraworker\Bridge\Metadata;

use Illuminate\Contracts\Queue\QueueableCollection;
use Illuminate\Contracts\Queue\QueueableEntity;
use Illuminate\Database\Eloquent\Model;
use Illuminate\Queue\SerializesModels;
use Laraworker\Bridge\Laravel;
use ReflectionClass;
use Throwable;

/**
 * What a worker needs to tell, before it runs a job, whether
 * unserializing it would throw ModelNotFoundException, and what Laravel
 * then does (CallQueuedHandler::handleModelNotFound).
 */
final class Models
{
    /**
     * The models SerializesModels turns into ModelIdentifiers: every
     * non-static property holding a model or an Eloquent collection (only
     * top-level properties; models nested in arrays are serialized whole).
     * A single model must still exist (firstOrFail); a collection silently
     * loses missing rows.
     *
     * @return list<array>
     */
    public function describe($job): array
    {
        if (! in_array(SerializesModels::class, class_uses_recursive($job), true)) {
            return [];
        }
        $out = [];
        foreach ((new ReflectionClass($job))->getProperties() as $property) {
            if ($property->isStatic()) {
                continue;
            }
            $property->setAccessible(true);
            if (method_exists($property, 'isInitialized') && ! $property->isInitialized($job)) {
                continue;
            }
            $value = $property->getValue($job);
            if ($value instanceof QueueableCollection) {
                $class = $value->getQueueableClass();
                if ($class === null) {
                    continue; // empty: nothing to load
                }
                $out[] = self::model($property->getName(), $class, $value->getQueueableConnection(), true, $value->getQueueableIds());
            } elseif ($value instanceof QueueableEntity) {
                $out[] = self::model($property->getName(), get_class($value), $value->getQueueableConnection(), false, [$value->getQueueableId()]);
            }
        }

        return $out;
    }

    /**
     * Where the worker loads it from: the model's table behind its
     * connection's table prefix, by its key column, without global scopes
     * (newQueryForRestoration).
     */
    private static function model(string $property, string $class, $connection, bool $collection, array $ids): array
    {
        $out = ['property' => $property, 'class' => $class, 'collection' => $collection,
            'connection' => null, 'table' => null, 'key' => null, 'ids' => array_values($ids)];
        if (is_subclass_of($class, Model::class)) {
            $model = (new $class)->setConnection($connection);
            $db = $model->getConnection();
            $out['connection'] = $db->getName();
            $out['table'] = $db->getTablePrefix().$model->getTable();
            $out['key'] = $model->getKeyName();
        }

        return $out;
    }

    /**
     * Whether Laravel deletes the job instead of failing it when a model is
     * missing, decided as this version's handleModelNotFound decides:
     * 13.x reads the payload's deleteWhenMissingModels; 12.x the default of
     * the command class's property (or #[DeleteWhenMissingModels]); 8-11
     * the same of the class named by displayName (11.3+ with the attribute).
     */
    public function deleteWhenMissing($job, array $payload): bool
    {
        if (array_key_exists('deleteWhenMissingModels', $payload)) {
            return (bool) $payload['deleteWhenMissingModels'];
        }
        $class = Laravel::atLeast('12.0.0') ? get_class($job) : (string) ($payload['displayName'] ?? get_class($job));
        try {
            $reflection = new ReflectionClass($class);
            $delete = $reflection->getDefaultProperties()['deleteWhenMissingModels'] ?? null;
            $attribute = 'Illuminate\\Queue\\Attributes\\DeleteWhenMissingModels';
            if ($delete === null && Laravel::atLeast('11.3.0') && class_exists($attribute)) {
                $delete = count($reflection->getAttributes($attribute)) !== 0;
            }

            return (bool) $delete;
        } catch (Throwable $e) {
            return false;
        }
    }
}
