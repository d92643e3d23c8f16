"""Typed events the engine emits, one module for each part of the loop. UIs render them; records
store them; `--json` prints them.

Every event is a frozen dataclass with a stable `type` name used in JSON.
"""

# The vocabulary is imported whole (`from tui_engineer.engine import events as ev`): every
# event class is named here, and a record's reader finds them all as Event's subclasses.
from tui_engineer.engine.events.ahead import (
    NextStepPrepared,
    NextStepRestarted,
    StepPreparing,
)
from tui_engineer.engine.events.base import Event, EventSink
from tui_engineer.engine.events.model import (
    FeedbackDelivered,
    ModelCallFailed,
    ModelCallStarted,
    ModelExchange,
    ModelRetried,
    ReviewNotesDelivered,
    ServerPaused,
    ServerResumed,
    TokenStream,
    UsageUpdated,
)
from tui_engineer.engine.events.plan import (
    PlanReady,
    StepInfo,
    StepStarted,
)
from tui_engineer.engine.events.review import (
    AcceptRefused,
    DecisionMade,
    ProposalReady,
    StepCommitted,
    StepSkipped,
    StepUndone,
    UndoRefused,
)
from tui_engineer.engine.events.session import (
    ApprovalChanged,
    BaselineFailed,
    BaselineReady,
    BaselineStarted,
    BudgetWarning,
    ContextReady,
    ErrorEvent,
    FeedbackPending,
    Notice,
    SessionFinished,
    SessionResumed,
    SessionStarted,
    ShadowReady,
    VerdictRecorded,
)
from tui_engineer.engine.events.step import (
    ActionApplied,
    AttemptStarted,
    Diagnosis,
    EditRefused,
    EditsApplied,
    ShowRequested,
    Stuck,
    ToolCallFinished,
    ToolCallStarted,
)
from tui_engineer.engine.events.tests import (
    CheckFinished,
    TestOutput,
    TestsFinished,
    TestsStarted,
)

__all__ = [
    "AcceptRefused",
    "ActionApplied",
    "ApprovalChanged",
    "AttemptStarted",
    "BaselineFailed",
    "BaselineReady",
    "BaselineStarted",
    "BudgetWarning",
    "CheckFinished",
    "ContextReady",
    "ShadowReady",
    "DecisionMade",
    "Diagnosis",
    "EditRefused",
    "EditsApplied",
    "ErrorEvent",
    "Event",
    "EventSink",
    "FeedbackDelivered",
    "FeedbackPending",
    "ModelCallFailed",
    "ModelCallStarted",
    "ModelExchange",
    "ModelRetried",
    "NextStepPrepared",
    "NextStepRestarted",
    "Notice",
    "PlanReady",
    "ProposalReady",
    "ReviewNotesDelivered",
    "ServerPaused",
    "ServerResumed",
    "SessionFinished",
    "SessionResumed",
    "SessionStarted",
    "ShowRequested",
    "StepCommitted",
    "StepInfo",
    "StepPreparing",
    "StepSkipped",
    "StepStarted",
    "StepUndone",
    "Stuck",
    "TestOutput",
    "TestsFinished",
    "TestsStarted",
    "TokenStream",
    "ToolCallFinished",
    "ToolCallStarted",
    "UndoRefused",
    "UsageUpdated",
    "VerdictRecorded",
]
