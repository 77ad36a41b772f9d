"""The build: the pipeline that measures (pipeline), its checkpoints, the output folder, provenance, the
build spec, the host-load section and the predictor's build. Nothing here imports the command line."""
