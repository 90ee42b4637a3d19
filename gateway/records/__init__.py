"""What the `/bench` routes read and write of the records beside the panels themselves:
verdicts (`verdicts`), owed verdicts (`pending`), each model's standing as people read it
(`standing`), and the usage (`usage`).

May import: runtime, state, store, access, config, errors, routing."""
