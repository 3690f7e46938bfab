package engine

func (e *Engine) noteDamage(err error) { e.damage.Note(err) }
func (e *Engine) damaged() error       { return e.damage.Get() }
