"""What the bot keeps in Redis, as operators handle it: which keys a backup holds (keys.py), the
backup file (file_format.py), taking and restoring one (transfer.py), and the data format version
with its migrations (version.py). docs/operations.md is the operator's page."""
