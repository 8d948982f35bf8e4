"""Results: the result model, its storage, the scenario table and the CLI's text/JSON renderings."""
