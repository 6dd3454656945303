"""Named fault points of the RSIAgent model, one per write order in the fidelity note (§2.1-§2.8, §2.16).

Arm them as ``crash@<point>`` (the process dies there; what was written before stays) or ``fail@<point>``
(the write or remote call fails and the model handles it as upstream does).
"""

from sim.faults import declare_point

PUSH_UPLOAD = declare_point(
    "rsiagent.push_memory.upload",
    "after the guest bank was deleted and recreated, the base64 upload fails: the guest bank is empty",
)
PUSH_EXTRACT = declare_point(
    "rsiagent.push_memory.extract",
    "before each file of the archive is extracted in the guest: a failure leaves a partial guest bank",
)
PULL_ATTEMPT = declare_point(
    "rsiagent.pull_memory.attempt",
    "one pull attempt fails (upstream sleeps 15 s and retries; after 3 failures it returns {})",
)
JOURNAL_AFTER_TGZ = declare_point(
    "rsiagent.journal.after_tgz",
    "between writing ep{NNN}.tgz and appending the journal.jsonl line",
)
INSTALL_STAGE = declare_point(
    "rsiagent.atomic_install_memory.stage",
    "before each file is written into the .{name}.stage-* directory",
)
INSTALL_AFTER_FSYNC = declare_point(
    "rsiagent.atomic_install_memory.after_fsync",
    "after the stage is fsynced, before the destination is renamed to the backup",
)
INSTALL_BETWEEN_RENAMES = declare_point(
    "rsiagent.atomic_install_memory.between_renames",
    "after the destination was renamed to the backup, before the stage is renamed in: no bank exists",
)
INSTALL_RENAME = declare_point(
    "rsiagent.atomic_install_memory.rename",
    "the rename of the stage to the destination fails (the backup is renamed back, then re-raised)",
)
INSTALL_AFTER_RENAME = declare_point(
    "rsiagent.atomic_install_memory.after_rename",
    "after the stage became the destination, before the parent fsync and the backup delete",
)
WRITE_MEMORY_EACH = declare_point(
    "rsiagent.write_memory.each",
    "before each file the direct write_memory API writes (after everything was deleted)",
)
CHECKPOINT = declare_point(
    "rsiagent.commit.checkpoint",
    "after the install, before the optional checkpoints/project_NNN/memory copy and outcome.json",
)
OSWORLD_PUSH = declare_point(
    "rsiagent.osworld.push_memory",
    "the OSWorld task's frozen-snapshot upload (a failure continues memory-OFF upstream)",
)
ALE_PUSH = declare_point(
    "rsiagent.ale.push_memory",
    "the ALE worker's frozen-evaluation upload (a failure raises upstream)",
)
SCRATCH_EXPORT = declare_point(
    "rsiagent.verifier.export_scratch",
    "detach_executor's scratch export (tolerated only on the infra-retry path)",
)

INSTALL_POINTS = (
    INSTALL_STAGE,
    INSTALL_AFTER_FSYNC,
    INSTALL_BETWEEN_RENAMES,
    INSTALL_RENAME,
    INSTALL_AFTER_RENAME,
)
