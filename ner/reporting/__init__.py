"""Reading finished training runs and aggregating them into the study report (`ner.cli.report`)."""
