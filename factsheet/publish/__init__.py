"""Publishing a factsheet where registries read it: one MLflow run per factsheet (params, headline metrics with
their CI bounds, tags, the factsheet's files as artifacts) and, optionally, a registered model version tagged
with the factsheet's digest and verdict. `contents` decides what is published (no MLflow import), `mlflow`
talks to the tracking server; MLflow is the optional extra `publish` (mlflow-skinny). Nothing is imported
here, so the command line stays fast: `from factsheet.publish.mlflow import publish_factsheet`."""
