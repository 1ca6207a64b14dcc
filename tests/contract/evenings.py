"""One short evening per rule system, and the dice it is played with: data the contract suites share.

Pure (no Django): the rules contract (test_rules.py) folds the same evenings without a database,
the command-path contract (test_systems.py), the audit, import and hardening suites play them
through the server.
"""

# (who, action) steps; "hero" in an action is replaced by the hero's id.
EVENINGS = {
    "tote": [
        ("gm", {"type": "start_session"}),
        ("gm", {"type": "start_scene"}),
        ("alice", {"type": "skill_test", "skill": "Strike", "target": 12}),
        ("alice", {"type": "invoke_aspect"}),
        ("alice", {"type": "skill_test", "skill": "Persuade", "target": 8, "visibility": "gm"}),
        ("gm", {"type": "gm_invoke_aspect"}),
        ("alice", {"type": "effect_test", "dice": 2, "label": "damage"}),
        ("gm", {"type": "mark_injury"}),
        ("gm", {"type": "end_scene"}),
        ("gm", {"type": "award_points", "points": 3, "reason": "a fine evening"}),
        ("gm", {"type": "end_tale"}),
        ("alice", {"type": "buy_advance", "advance": "skill", "skill": "Grapple"}),
        ("gm", {"type": "end_session"}),
    ],
    "wyrm": [
        ("gm", {"type": "start_session"}),
        ("alice", {"type": "check", "attribute": "rogue", "skills": ["Stealth"], "dl": 12}),
        ("alice", {"type": "spend_fate", "use": "reroll"}),
        ("gm", {"type": "approve_fate"}),
        ("alice", {"type": "damage", "dice": 2, "bonus": 1}),
        ("gm", {"type": "grant_fate", "amount": 2, "reason": "heroics"}),
        ("gm", {"type": "automatic_success", "attribute": "rogue", "skill": "Stealth"}),
        ("gm", {"type": "award_points", "points": 10, "reason": "the heist"}),
        ("alice", {"type": "buy_advance", "advance": "attribute", "attribute": "warrior"}),
        ("gm", {"type": "end_session"}),
    ],
    "tale": [
        ("gm", {"type": "start_session"}),
        ("alice", {"type": "straight_roll", "target": 21, "visibility": "secret"}),
        ("alice", {"type": "start_contest", "vs_pool": 3, "rounds": 1, "label": "pick the lock"}),
        ("alice", {"type": "iterated_round"}),  # one round: the contest ends with it
        ("alice", {"type": "start_combat", "their_pool": 4}),
        ("alice", {"type": "combat_round", "attack": 3, "defence": 4, "their_attack": 2, "their_defence": 2}),
        ("alice", {"type": "end_contest"}),
        ("gm", {"type": "award_points", "points": 5, "reason": "session one"}),
        ("alice", {"type": "buy_advance", "characteristic": "deft"}),
        ("gm", {"type": "end_session"}),
    ],
    "mdt": [
        ("gm", {"type": "start_session"}),
        ("alice", {"type": "test", "attribute": "presence", "difficulty": 2}),
        ("alice", {"type": "opposed_test", "attribute": "wits", "vs_pool": 3}),
        ("gm", {"type": "start_project", "name": "Translate the tome", "target": 5, "attribute": "intelligence"}),
        ("alice", {"type": "project_roll", "project": "Translate the tome"}),
        ("gm", {"type": "say_yes", "goal": "open the unlocked door"}),
        ("gm", {"type": "award_points", "points": 6, "reason": "session one"}),
        ("alice", {"type": "buy_advance", "attribute": "wits"}),
        ("gm", {"type": "end_session"}),
    ],
}

# Faces that every system can use (d6 and d10): varied, never exhausted.
FACES = [4, 1, 6, 3, 5, 2, 6, 1, 3, 4, 2, 5] * 20
