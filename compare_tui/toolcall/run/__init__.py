"""Running scenarios: from a catalogue entry to a stored run, the IO loop, and the server's own facts."""
