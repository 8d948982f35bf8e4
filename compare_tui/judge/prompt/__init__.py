"""What a judge is shown and how its reply is read: answers, reasoning traces, the rubric, prompt templates, reply parsing."""
