// Package contract is the CUE↔Go contract: every field of the CUE package
// (package schemas, with the policy directories' files) the engine reads
// or writes, named once, and the Go structs it decodes what the CUE writes
// into. docs/engine.md says what each holds; TestContractInOneFile (engine)
// keeps the engine's other Go files from spelling one.
package contract

import (
	"encoding/json"

	"cuelang.org/go/cue"
)

// The package's top-level fields.
const (
	FieldAdmission               = "admission"               // reviews by apiVersion and kind
	FieldCarried                 = "carried"                 // input values a review only carries over
	FieldClusterTrainingRuntimes = "clusterTrainingRuntimes" // the shipped (and declared) runtimes
	FieldContextKinds            = "contextKinds"            // other groups' kinds the rules read
	FieldControllers             = "controllers"             // a kind's controller part
	FieldCRDChecks               = "crdChecks"               // the API server's own checks, by kind
	FieldCRDCheckParts           = "crdCheckParts"           // those of them that read one part of the object
	fieldCRDs                    = "crds"                    // the CRDs the engine generates
	FieldDeclaredChecks          = "declaredChecks"          // checks of the objects a policy declares
	FieldFrameworks              = "frameworks"              // the framework registry
	fieldGroupHints              = "groupHints"              // what serves a group no review does
	fieldGroups                  = "groups"                  // the API groups the engine owns
	FieldKnownKeys               = "knownKeys"               // label and annotation keys with a meaning
	FieldLint                    = "lint"                    // what the load's checks leave alone (lint/suppress.go)
	FieldLookups                 = "lookups"                 // what a review needs looked up
	FieldMerges                  = "merges"                  // strategic merges a render needs
	fieldMPIFlavors              = "mpiFlavors"              // shared by the rules
	fieldMPIImplementations      = "mpiImplementations"      // shared by the rules
	FieldMutators                = "mutators"                // a kind's mutating webhook
	fieldOpaqueMaps              = "opaqueMaps"              // maps whose keys reach the CUE as tokens
	fieldOwned                   = "owned"                   // the kinds renders create
	FieldPlans                   = "plans"                   // a render's per-runtime part
	FieldProbes                  = "probes"                  // documents a policy's rules are tried on at load
	FieldRefusals                = "refusals"                // what the cluster refuses of objects renders build
	FieldRender                  = "render"                  // a kind's render
	FieldRenderParts             = "renderParts"             // the parts a plan chooses
	FieldRenderChecks            = "renderChecks"            // checks only the load's trial renders evaluate
	fieldRuntimeKinds            = "runtimeKinds"            // the kinds a TrainJob may reference
	fieldServerManaged           = "serverManaged"           // fields the API server writes itself
	fieldTypedParts              = "typedParts"              // parts Kubeflow reads as Go types
)

// contractFields are the top level's fields, in order: those the engine
// reads and those the rules share. An admin's file declares only these,
// and definitions (#x) and hidden fields (_x) of its own.
var TopLevelFields = []string{
	FieldAdmission, FieldCarried, FieldClusterTrainingRuntimes, FieldContextKinds, FieldControllers, FieldCRDChecks, FieldCRDCheckParts, fieldCRDs,
	FieldDeclaredChecks, FieldFrameworks, fieldGroupHints, fieldGroups, FieldKnownKeys, FieldLint, FieldLookups, FieldMerges, fieldMPIFlavors, fieldMPIImplementations, FieldMutators,
	fieldOpaqueMaps, fieldOwned, FieldPlans, FieldProbes, FieldRefusals, FieldRender, FieldRenderChecks, FieldRenderParts, fieldRuntimeKinds, fieldServerManaged, fieldTypedParts,
}

// FieldLintIgnore is lint's field of the heuristic checks a policy
// directory silences: check name to the reason.
const FieldLintIgnore = "ignore"

// Fields inside a review, a render, a plan, a lookup, a probe and a CRD
// entry, and the definitions the policy checks read.
const (
	FieldObject  = "object"  // a review's object, with its defaults
	FieldInput   = "input"   // what a review or a render is given
	FieldContext = "context" // what the engine fills in (#Context)
	FieldParts   = "parts"   // a plan's chosen parts
	FieldPlan    = "plan"    // a render's context: its plan
	FieldRuntime = "runtime" // a context's runtime; a probe's runtime
	FieldOld     = "oldObject"
	// The operations a request names (#Context.operation).
	OpCreate = "CREATE"
	OpUpdate = "UPDATE"
	// FieldSchemaChecked tells a review the API server checked the object.
	FieldSchemaChecked = "schemaChecked"
	fieldMLPolicy      = "#MLPolicy"
	fieldContextDef    = "#Context" // what a review's context holds
	// goEnumPrefix begins what `cue get go` names the disjunction of a Go
	// enum type's constants (#enumPullPolicy for #PullPolicy).
	GoEnumPrefix = "#enum"
	// FieldCoreV1 holds core/v1's package, whose definitions are the core
	// group's kinds (#ConfigMap).
	FieldCoreV1 = "_corev1"
	// A CRD check part's part of the object and its items' indexes; a
	// knownKeys entry's maps (at).
	FieldSelf = "self"
	FieldAt   = "at"
)

// The fields of a context (#Context) the engine fills in, besides
// FieldRuntime, FieldOld and FieldPlan.
const (
	FieldMerged     = "merged"     // the strategic merges of merges, by name
	FieldQuantities = "quantities" // the facts of every quantity the input holds
	FieldExisting   = "existing"   // the render's objects that exist already
	FieldRelease    = "release"    // the release vet checks removal windows against
	FieldOperation  = "operation"  // CREATE or UPDATE
	FieldNow        = "now"        // the request's time (RFC 3339), for mutators
)

// Paths the engine reads.
var (
	// The package's top level.
	PathCRDs                    = cue.MakePath(cue.Str(fieldCRDs))
	PathMerges                  = cue.MakePath(cue.Str(FieldMerges))
	PathGroups                  = cue.MakePath(cue.Str(fieldGroups))
	PathGroupHints              = cue.MakePath(cue.Str(fieldGroupHints))
	PathContextKinds            = cue.MakePath(cue.Str(FieldContextKinds))
	PathOwned                   = cue.MakePath(cue.Str(fieldOwned))
	PathOpaqueMaps              = cue.MakePath(cue.Str(fieldOpaqueMaps))
	PathKnownKeys               = cue.MakePath(cue.Str(FieldKnownKeys))
	PathTypedParts              = cue.MakePath(cue.Str(fieldTypedParts))
	PathServerManaged           = cue.MakePath(cue.Str(fieldServerManaged))
	PathClusterTrainingRuntimes = cue.MakePath(cue.Str(FieldClusterTrainingRuntimes))
	PathFrameworks              = cue.MakePath(cue.Str(FieldFrameworks))
	PathRuntimeKinds            = cue.MakePath(cue.Str(fieldRuntimeKinds))

	// A crds entry.
	PathCRDSchema         = cue.MakePath(cue.Str("schema"))
	PathCRDGroup          = cue.MakePath(cue.Str("group"))
	PathCRDVersion        = cue.MakePath(cue.Str("version"))
	PathCRDStatus         = cue.MakePath(cue.Str("status"))
	PathCRDScope          = cue.MakePath(cue.Str("scope"))
	PathCRDPrinterColumns = cue.MakePath(cue.Str("printerColumns"))
	// A crds entry's scope for a kind without a namespace.
	CRDScopeCluster = "Cluster"

	// A plans entry's and a lookups entry's input paths they read (the
	// engine gives them only those).
	PathReads = cue.MakePath(cue.Str("reads"))
	// What of the request each mutation of a mutator needs (#Mutator.needs).
	PathNeeds = cue.MakePath(cue.Str("needs"))
	// The paths a lookups entry reads on an UPDATE alone.
	PathUpdateReads = cue.MakePath(cue.Str("updateReads"))

	// A crdCheckParts entry's path, and the indexes of its "*" items.
	PathCRDPartPath = cue.MakePath(cue.Str("path"))
	PathCRDPartAt   = cue.MakePath(cue.Str(FieldAt))

	// A carried entry's path and the constraint its values meet.
	PathCarriedPath  = cue.MakePath(cue.Str("path"))
	PathCarriedValue = cue.MakePath(cue.Str("value"))
	PathCarriedCarry = cue.MakePath(cue.Str("carry"))

	// A plans entry's context.
	PathPlanRuntime = cue.MakePath(cue.Str(FieldContext), cue.Str(FieldRuntime))
	PathPlanMerged  = cue.MakePath(cue.Str(FieldContext), cue.Str("merged"))

	// A declaredChecks entry's quantities (context.quantities).
	PathDeclaredQuantities = cue.MakePath(cue.Str(FieldContext), cue.Str(FieldQuantities))

	// A review's object, input, findings by phase, warnings and summary.
	PathObject = cue.MakePath(cue.Str(FieldObject))
	// A review's object's name.
	PathObjectName = cue.MakePath(cue.Str(FieldObject), cue.Str("metadata"), cue.Str("name"))
	pathInput      = cue.MakePath(cue.Str(FieldInput))
	PathReview     = map[Phase]cue.Path{
		PhaseCRD:     cue.MakePath(cue.Str(string(PhaseCRD))),
		PhaseWebhook: cue.MakePath(cue.Str(string(PhaseWebhook))),
		PhasePolicy:  cue.MakePath(cue.Str(string(PhasePolicy))),
	}
	PathReviewWarnings = cue.MakePath(cue.Str("warnings"))
	PathReviewSummary  = cue.MakePath(cue.Str("summary"))

	// A mutator's mutations.
	PathMutations = cue.MakePath(cue.Str("mutations"))

	// A lookups entry's references.
	PathLookupRuntime  = cue.MakePath(cue.Str(FieldRuntime))
	PathLookupObjects  = cue.MakePath(cue.Str("objects"))
	PathLookupExisting = cue.MakePath(cue.Str("existing"))
	// A lookup's kind and group (#RuntimeLookup).
	SelLookupKind  = cue.Str("kind")
	SelLookupGroup = cue.Str("group")

	// A render's (and a plan's) outputs.
	PathErrors   = cue.MakePath(cue.Str("errors"))
	PathWarnings = cue.MakePath(cue.Str("warnings"))
	PathObjects  = cue.MakePath(cue.Str("objects"))
	PathBases    = cue.MakePath(cue.Str("bases"))
	PathEdits    = cue.MakePath(cue.Str("edits"))
	PathGenerate = cue.MakePath(cue.Str("generate"))
	PathSums     = cue.MakePath(cue.Str("sums"))
	PathOps      = cue.MakePath(SelOps)
	PathOrder    = cue.MakePath(cue.Str("order"))
	PathMetadata = cue.MakePath(cue.Str("metadata"))
	// An object's name.
	PathMetadataName = cue.MakePath(cue.Str("metadata"), cue.Str("name"))
	PathParts        = cue.MakePath(cue.Str(FieldParts))
	PathPlanOps      = cue.MakePath(cue.Str("ops"))
	PathController   = cue.MakePath(cue.Str("controller"))

	// A probes entry: the runtime the engine fills, the documents it
	// admits and renders.
	PathProbeRuntime   = cue.MakePath(cue.Str(FieldRuntime))
	PathProbeDocuments = cue.MakePath(cue.Str("documents"))
	PathProbeVariants  = cue.MakePath(cue.Str("variants"))
	PathProbeFollows   = cue.MakePath(cue.Str("follows"))

	// A document written in CUE: an object has a kind.
	PathKind = cue.MakePath(cue.Str("kind"))
)

// Selectors for paths with parts the engine knows only at run time.
var (
	SelAdmission   = cue.Str(FieldAdmission)
	SelFrameworks  = cue.Str(FieldFrameworks)
	SelCRDs        = cue.Str(fieldCRDs)
	SelPlans       = cue.Str(FieldPlans)
	SelParts       = cue.Str(FieldParts)
	SelRender      = cue.Str(FieldRender)
	SelRenderParts = cue.Str(FieldRenderParts)
	SelObject      = cue.Str(FieldObject)
	SelMLPolicy    = cue.Def(fieldMLPolicy)
	SelContextDef  = cue.Def(fieldContextDef)
	SelObjects     = cue.Str("objects")
	SelExisting    = cue.Str("existing")
	SelEdits       = cue.Str("edits")
	SelOps         = cue.Str("ops")
	SelValue       = cue.Str("value")
	SelItems       = cue.Str("items")
	// A frameworks entry's label values.
	SelFrameworkLabels = cue.Str("labels")
	SelGenerate        = cue.Str("generate")
	SelSums            = cue.Str("sums")
	SelBases           = cue.Str("bases")
	SelMutations       = cue.Str("mutations")
	SelMutators        = cue.Str(FieldMutators)
	SelUpdateReads     = PathUpdateReads.Selectors()[0]
	// SelNeedsRenderPart is a framework's registry entry's: whether the
	// framework must have a render part of its name.
	SelNeedsRenderPart = cue.Str("needsRenderPart")
)

// Phase says which check produced a finding. The review's blocks of
// findings are named after theirs (crd, webhook, policy: PathReview); the
// others are the engine's own.
type Phase string

const (
	// PhaseSchema: the object does not fit the schema (types, unknown fields).
	PhaseSchema Phase = "schema"
	// PhaseCRD: the CRD's OpenAPI and CEL rules.
	PhaseCRD Phase = "crd"
	// PhaseWebhook: Kubeflow Trainer's validating webhooks.
	PhaseWebhook Phase = "webhook"
	// PhasePolicy: cuetrainer's own rules beyond Kubeflow.
	PhasePolicy Phase = "policy"
	// PhaseInput: the document is not an object the engine can admit (no
	// kind, an unknown kind of our groups, defined twice).
	PhaseInput Phase = "input"
	// PhaseRead: the document could not be read (syntax, encoding, size).
	PhaseRead Phase = "read"
	// PhaseRender: the object cannot be rendered.
	PhaseRender Phase = "render"
	// PhaseRuleError: a rule of the loaded CUE could not be evaluated for
	// the object (it reads what is not there, or writes a finding that
	// is no #FieldError): a defect in the rule, the admin's to fix, not
	// the object's. The object's other findings stand.
	PhaseRuleError Phase = "rule-error"
	// PhaseDefect: cuetrainer or CUE failed evaluating the object (a
	// panic, defect.go): a defect of theirs, not the policy's nor the
	// object's. The object is rejected, as a webhook that cannot decide
	// refuses.
	PhaseDefect Phase = "defect"
)

// The Go structs the engine decodes what the CUE writes into, each beside
// the CUE definition it reads (the names are the CUE's fields, matched as
// encoding/json matches them).

// ControllerDirectives are the CUE's `controller` of a render.
type ControllerDirectives struct {
	// Skip says why the controller applies nothing; a controller's session
	// then renders no objects.
	Skip string `json:"skip,omitempty"`
	// ApplyPhase orders the objects to apply by their ids: lower first.
	ApplyPhase map[string]int `json:"applyPhase,omitempty"`
	Status     struct {
		// Conditions to set, by type.
		Conditions []Condition `json:"conditions"`
		// Fields of the status to set.
		Fields map[string]any `json:"fields"`
	} `json:"status"`
	// Deadline, when set, fails the object at a time.
	Deadline *Deadline `json:"deadline,omitempty"`
}

// Deadline is the CUE's controller.deadline: Seconds after Since (a time,
// or "now"), set Conditions and delete Delete.
type Deadline struct {
	Since      string      `json:"since"`
	Seconds    int64       `json:"seconds"`
	Conditions []Condition `json:"conditions"`
	Delete     []struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Name       string `json:"name"`
	} `json:"delete"`
}

// Condition is a status condition to set (#ConditionUpdate); an empty
// LastTransitionTime means now when the status changes.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// lookupRef is one object a review's lookup names (#RuntimeLookup).
type LookupRef struct {
	Group     string `json:"group"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Pinned    *struct {
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Key       string `json:"key"`
	} `json:"pinned"`
	// Reads are the paths of an existing object the render reads (nil:
	// all of it); see readOfExisting.
	Reads [][]string `json:"reads"`
}

// key names the object a lookup names.
func (l LookupRef) Key() string { return l.Group + "/" + l.Kind + "/" + l.Namespace + "/" + l.Name }

// rawFinding is a finding as the CUE writes it (#FieldError, #Warning).
type RawFinding struct {
	Path      *string         `json:"path"`
	Type      *string         `json:"type"`
	Value     json.RawMessage `json:"value"`
	Supported []string        `json:"supported"`
	Detail    string          `json:"detail"`
	Message   string          `json:"message"`
}

type Base struct{ Path, From []string }

// merge is one strategic merge a render needs (#merges in the CUE).
type Merge struct {
	Base      []string
	Patches   []string
	Schema    string
	KeepOrder []string
}

// RuntimeSummary is a runtime review's summary (#RuntimeReview's summary,
// trainingruntime.cue): what `runtimes list` shows of a runtime and what
// `runtimes packages` runs on.
type RuntimeSummary struct {
	Framework  string `json:"framework"`
	Deprecated bool   `json:"deprecated"`
	NumNodes   int64  `json:"numNodes"`
	Policy     string `json:"policy"`
	PodGroup   string `json:"podGroup"`
	Image      string `json:"image"`
	// TrainerJob is the trainer step's job, TrainerContainer its node
	// container: whose logs the SDK reads.
	TrainerJob       string `json:"trainerJob"`
	TrainerContainer string `json:"trainerContainer"`
	// BuiltinTrainer: the SDK runs only its BuiltinTrainer on the runtime.
	BuiltinTrainer bool `json:"builtinTrainer"`
}
