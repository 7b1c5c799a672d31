"""How the real agent logs here were cut from ../shared/data (run once by hand; the output is committed).

Kept: what the importers read. abp runs: task_id, task, result_status, action_history (thoughts and
final answers dropped). AgentRewardBench: goal, agent, trajectory_info.summary_info (cum_reward,
n_steps) and the "Action History:" part of input_text (chat transcripts, judge output dropped).
Online_Mind2Web.json: task_id, confirmed_task, website, reference_length, level.
Sources and licences: LICENSE-abp (MIT), LICENSE-agentrewardbench (MIT), README.md.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

SHARED = Path(sys.argv[1] if len(sys.argv) > 1 else "../shared/data")
HERE = Path(__file__).resolve().parent


def main() -> None:
    abp = SHARED / "online-mind2web-abp"
    out = HERE / "abp" / "runs"
    shutil.rmtree(HERE / "abp", ignore_errors=True)
    for result in sorted((abp / "runs").glob("*/result.json")):
        data = json.loads(result.read_text(encoding="utf-8"))
        keep = {k: data[k] for k in ("task_id", "task", "result_status", "action_history") if k in data}
        (out / result.parent.name).mkdir(parents=True)
        (out / result.parent.name / "result.json").write_text(json.dumps(keep, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    tasks = json.loads((abp / "Online_Mind2Web.json").read_text(encoding="utf-8"))
    keep_tasks = [{k: t.get(k) for k in ("task_id", "confirmed_task", "website", "reference_length", "level")} for t in tasks]
    (HERE / "abp" / "Online_Mind2Web.json").write_text(json.dumps(keep_tasks, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    shutil.copy(abp / "LICENSE", HERE / "LICENSE-abp")
    arb = SHARED / "agentrewardbench-webarena"
    shutil.rmtree(HERE / "agentrewardbench", ignore_errors=True)
    for f in sorted(arb.glob("*/webarena.*.json")):
        data = json.loads(f.read_text(encoding="utf-8"))
        text = data.get("input_text", "")
        keep = {
            "goal": data.get("goal"), "agent": data.get("agent"), "benchmark": data.get("benchmark"),
            "trajectory_info": {"summary_info": {k: data["trajectory_info"]["summary_info"].get(k) for k in ("cum_reward", "n_steps")}},
            "input_text": text[text.find("Action History:"):] if "Action History:" in text else "",
        }  # fmt: skip
        (HERE / "agentrewardbench" / f.parent.name).mkdir(parents=True, exist_ok=True)
        (HERE / "agentrewardbench" / f.parent.name / f.name).write_text(json.dumps(keep, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    shutil.copy(arb / "LICENSE", HERE / "LICENSE-agentrewardbench")


if __name__ == "__main__":
    main()
