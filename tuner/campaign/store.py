"""A campaign directory: the plan (configurations x repetitions in a random order) and one file per finished
measurement, each written atomically (temporary file + rename), so that a run killed at any instant loses
nothing already measured and a rerun measures only what is missing.

    CAMPAIGN_DIR/plan.json            configurations, their features and keyword arguments, the order
    CAMPAIGN_DIR/measurements/ID.json one finished measurement (config_id, repetition, figures, node; under
                                      "latency" the load point, metrics with CIs and its records file)
    CAMPAIGN_DIR/latency/ID.jsonl     its latency requests' records (probes.load.records), sha256 in ID.json
    CAMPAIGN_DIR/measurements.csv     the table (pandas), rewritten after each run; .parquet beside it
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd

from probes.core.digests import sha256_bytes
from probes.core.errors import InputError
from probes.core.files import write_atomic
from probes.load.records import RequestRecord, load_records, records_jsonl
from tuner.campaign.latency import LATENCY

RECORDS_DIR = "latency"


class CampaignError(InputError):
    """A campaign directory or plan that cannot be used (exit 2 at the CLI)."""


def item_id(config_id: str, rep: int) -> str:
    return f"{config_id}-r{rep}"


class CampaignStore:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.mdir = self.root / "measurements"

    # --- plan --------------------------------------------------------------------------------------
    def create(
        self, configs: list[dict], repetitions: int, seed: int, meta: dict, order: str = "shuffled"
    ) -> dict:
        """Write the plan unless one exists (resume keeps the first plan: its order and its configurations).
        `order`: "shuffled" (every (configuration, repetition) in one random order) or "rounds" (repetition r
        of every configuration, in a fresh random order, before any repetition r+1: a campaign stopped early
        has measured as many configurations as possible, and drift lands on rounds, not on configurations)."""
        if (self.root / "plan.json").exists():
            plan = self.plan()
            if [c["id"] for c in plan["configs"]] != [c["id"] for c in configs] or plan[
                "repetitions"
            ] != repetitions:
                raise CampaignError(f"{self.root}: holds another campaign's plan (use a new directory)")
            return plan
        self.mdir.mkdir(parents=True, exist_ok=True)
        rng = random.Random(seed)
        if order == "rounds":
            items = []
            for r in range(repetitions):
                ids = [c["id"] for c in configs]
                rng.shuffle(ids)
                items += [item_id(i, r) for i in ids]
        else:
            items = [item_id(c["id"], r) for c in configs for r in range(repetitions)]
            rng.shuffle(items)  # repetitions in random order: drift does not align with configs
        plan = {
            "configs": configs,
            "repetitions": repetitions,
            "seed": seed,
            "ordering": order,
            "order": items,
            **meta,
        }
        write_atomic(self.root / "plan.json", json.dumps(plan, indent=1))
        return plan

    def plan(self) -> dict:
        try:
            return json.loads((self.root / "plan.json").read_text(encoding="utf-8"))
        except (FileNotFoundError, NotADirectoryError):
            raise CampaignError(f"{self.root}: no plan.json (not a campaign directory)") from None
        except OSError as exc:
            raise CampaignError(f"{self.root}/plan.json: cannot read ({exc.strerror})") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise CampaignError(f"{self.root}/plan.json: not a campaign plan (not JSON)") from None

    # --- measurements ------------------------------------------------------------------------------
    def done(self) -> set[str]:
        return {p.stem for p in self.mdir.glob("*.json")} if self.mdir.exists() else set()

    def pending(self) -> list[str]:
        done = self.done()
        return [i for i in self.plan()["order"] if i not in done]

    def record(self, iid: str, row: dict) -> None:
        """Keep one finished measurement: its latency records first (a file of their own, its sha256 in the
        measurement), then the measurement's file, whose presence marks it done."""
        latency = row.get(LATENCY)
        if latency is not None and "records" in latency:
            latency = dict(latency)
            data = records_jsonl(RequestRecord.model_validate(r) for r in latency.pop("records"))
            path = write_atomic(self.root / RECORDS_DIR / f"{iid}.jsonl", data)
            latency["records_file"] = {
                "path": path.relative_to(self.root).as_posix(),
                "sha256": sha256_bytes(data),
                "records": data.count(b"\n"),
            }
            row = {**row, LATENCY: latency}
        write_atomic(self.mdir / f"{iid}.json", json.dumps(row))

    def latency_records(self, row: dict) -> list[RequestRecord]:
        """A measurement's latency records, read back from their file (CampaignError: missing or altered)."""
        ref = row[LATENCY]["records_file"]
        path = self.root / ref["path"]
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise CampaignError(f"{path}: cannot read ({exc.strerror})") from None
        if sha256_bytes(data) != ref["sha256"]:
            raise CampaignError(f"{path}: its sha256 differs from the one its measurement recorded")
        return load_records(data)

    def rows(self) -> list[dict]:
        out = []
        for p in sorted(self.mdir.glob("*.json")):
            try:
                out.append(json.loads(p.read_text(encoding="utf-8")))
            except json.JSONDecodeError:
                raise CampaignError(f"{p}: damaged measurement file") from None
        return out

    def table(self) -> pd.DataFrame:
        """One row per measurement: config_id, repetition, node, the figures, and one 0/1 column per feature."""
        return measurement_table({c["id"]: c["features"] for c in self.plan()["configs"]}, self.rows())

    def evidence(self) -> list[dict]:
        """Every measurement as one self-contained line (what a factsheet keeps of its campaign): the
        measurement, its configuration's features, and its latency records inline (digest-checked)."""
        features = {c["id"]: c["features"] for c in self.plan()["configs"]}
        out = []
        for row in self.rows():
            line = {**row, FEATURES: features[row["config_id"]]}
            if LATENCY in row:
                latency = {k: v for k, v in row[LATENCY].items() if k != "records_file"}
                latency["records"] = [r.model_dump(mode="json") for r in self.latency_records(row)]
                line[LATENCY] = latency
            out.append(line)
        return out

    def save_table(self) -> pd.DataFrame:
        df = self.table()
        write_atomic(self.root / "measurements.csv", df.to_csv(index=False))
        write_atomic(self.root / "measurements.parquet", df.to_parquet(index=False))
        return df


FEATURES = "features"  # an evidence line's configuration features


def measurement_table(features: dict[str, list[str]], rows: list[dict]) -> pd.DataFrame:
    """The table the predictor learns from: one row per measurement (config_id, repetition, node, seconds, the
    figures) and one 0/1 column `f:NAME` per feature of the configurations; raw records stay out of it."""
    feats = {cid: set(names) for cid, names in features.items()}
    names = sorted(set().union(*feats.values())) if feats else []
    table = []
    for r in rows:
        flat = {k: v for k, v in r.items() if k not in ("figures", "records", LATENCY, FEATURES)}
        flat.update(r.get("figures", {}))
        flat.update({f"f:{n}": int(n in feats[r["config_id"]]) for n in names})
        table.append(flat)
    return pd.DataFrame(table)
