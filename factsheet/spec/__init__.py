"""The build spec (`model.yaml`) and every section of it, the outlets' included (sign, compliance, publish,
predictor): one room below the builder, the readers and the outlets, so each of them reads its section
without importing another sibling."""
