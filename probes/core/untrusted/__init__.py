"""Input from someone else, at the bottom of the stack: the shared limits and the bounded readers and parser
that every probe and `factsheet/untrusted/` use (size before read, depth before parse, finite numbers)."""
