// Package jobgen writes the Go side of a PHP job class: a struct whose
// `php:"name"` fields phpserialize.Decode fills from the job's command,
// and a handlers.Register skeleton declaring what the class is beyond its
// properties (ShouldBeUnique, $deleteWhenMissingModels, the models'
// tables), from what package phpclass read of the class.
package jobgen
