"""A user's tool definitions: reading a tools file, recognising each document's shape, fitting names, refused schema shapes."""
