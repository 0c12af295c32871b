package engine

import (
	"encoding/json"

	"cuelang.org/go/cue"
)

// The CUE↔Go contract: every field of the CUE package (package schemas,
// with the policy directories' files) the engine reads or writes, named
// once. docs/engine.md says what each holds; TestContractInOneFile keeps
// other Go files from spelling one.

// The package's top-level fields.
const (
	fieldAdmission               = "admission"               // reviews by apiVersion and kind
	fieldCarried                 = "carried"                 // input values a review only carries over
	fieldClusterTrainingRuntimes = "clusterTrainingRuntimes" // the shipped (and declared) runtimes
	fieldContextKinds            = "contextKinds"            // other groups' kinds the rules read
	fieldControllers             = "controllers"             // a kind's controller part
	fieldCRDChecks               = "crdChecks"               // the API server's own checks, by kind
	fieldCRDCheckParts           = "crdCheckParts"           // those of them that read one part of the object
	fieldCRDs                    = "crds"                    // the CRDs the engine generates
	fieldDeclaredChecks          = "declaredChecks"          // checks of the objects a policy declares
	fieldFrameworks              = "frameworks"              // the framework registry
	fieldGroupHints              = "groupHints"              // what serves a group no review does
	fieldGroups                  = "groups"                  // the API groups the engine owns
	fieldKnownKeys               = "knownKeys"               // label and annotation keys with a meaning
	fieldLookups                 = "lookups"                 // what a review needs looked up
	fieldMerges                  = "merges"                  // strategic merges a render needs
	fieldMPIFlavors              = "mpiFlavors"              // shared by the rules
	fieldMPIImplementations      = "mpiImplementations"      // shared by the rules
	fieldMutators                = "mutators"                // a kind's mutating webhook
	fieldOpaqueMaps              = "opaqueMaps"              // maps whose keys reach the CUE as tokens
	fieldOwned                   = "owned"                   // the kinds renders create
	fieldPlans                   = "plans"                   // a render's per-runtime part
	fieldProbes                  = "probes"                  // documents a policy's rules are tried on at load
	fieldRefusals                = "refusals"                // what the cluster refuses of objects renders build
	fieldRender                  = "render"                  // a kind's render
	fieldRenderParts             = "renderParts"             // the parts a plan chooses
	fieldRenderChecks            = "renderChecks"            // checks only the load's trial renders evaluate
	fieldRuntimeKinds            = "runtimeKinds"            // the kinds a TrainJob may reference
	fieldServerManaged           = "serverManaged"           // fields the API server writes itself
	fieldTypedParts              = "typedParts"              // parts Kubeflow reads as Go types
)

// contractFields are the top level's fields, in order: those the engine
// reads and those the rules share. An admin's file declares only these,
// and definitions (#x) and hidden fields (_x) of its own.
var contractFields = []string{
	fieldAdmission, fieldCarried, fieldClusterTrainingRuntimes, fieldContextKinds, fieldControllers, fieldCRDChecks, fieldCRDCheckParts, fieldCRDs,
	fieldDeclaredChecks, fieldFrameworks, fieldGroupHints, fieldGroups, fieldKnownKeys, fieldLookups, fieldMerges, fieldMPIFlavors, fieldMPIImplementations, fieldMutators,
	fieldOpaqueMaps, fieldOwned, fieldPlans, fieldProbes, fieldRefusals, fieldRender, fieldRenderChecks, fieldRenderParts, fieldRuntimeKinds, fieldServerManaged, fieldTypedParts,
}

// Fields inside a review, a render, a plan, a lookup, a probe and a CRD
// entry, and the definitions the policy checks read.
const (
	fieldObject  = "object"  // a review's object, with its defaults
	fieldInput   = "input"   // what a review or a render is given
	fieldContext = "context" // what the engine fills in (#Context)
	fieldParts   = "parts"   // a plan's chosen parts
	fieldPlan    = "plan"    // a render's context: its plan
	fieldRuntime = "runtime" // a context's runtime; a probe's runtime
	fieldOld     = "oldObject"
	// The operations a request names (#Context.operation).
	opCreate = "CREATE"
	opUpdate = "UPDATE"
	// fieldSchemaChecked tells a review the API server checked the object.
	fieldSchemaChecked = "schemaChecked"
	fieldMLPolicy      = "#MLPolicy"
	fieldContextDef    = "#Context" // what a review's context holds
	// goEnumPrefix begins what `cue get go` names the disjunction of a Go
	// enum type's constants (#enumPullPolicy for #PullPolicy).
	goEnumPrefix = "#enum"
	// fieldCoreV1 holds core/v1's package, whose definitions are the core
	// group's kinds (#ConfigMap).
	fieldCoreV1 = "_corev1"
	// A CRD check part's part of the object and its items' indexes; a
	// knownKeys entry's maps (at).
	fieldSelf = "self"
	fieldAt   = "at"
)

// The fields of a context (#Context) the engine fills in, besides
// fieldRuntime, fieldOld and fieldPlan.
const (
	fieldMerged     = "merged"     // the strategic merges of merges, by name
	fieldQuantities = "quantities" // the facts of every quantity the input holds
	fieldExisting   = "existing"   // the render's objects that exist already
	fieldRelease    = "release"    // the release vet checks removal windows against
	fieldOperation  = "operation"  // CREATE or UPDATE
	fieldNow        = "now"        // the request's time (RFC 3339), for mutators
)

// Paths the engine reads.
var (
	// The package's top level.
	pathCRDs                    = cue.MakePath(cue.Str(fieldCRDs))
	pathMerges                  = cue.MakePath(cue.Str(fieldMerges))
	pathGroups                  = cue.MakePath(cue.Str(fieldGroups))
	pathGroupHints              = cue.MakePath(cue.Str(fieldGroupHints))
	pathContextKinds            = cue.MakePath(cue.Str(fieldContextKinds))
	pathOwned                   = cue.MakePath(cue.Str(fieldOwned))
	pathOpaqueMaps              = cue.MakePath(cue.Str(fieldOpaqueMaps))
	pathKnownKeys               = cue.MakePath(cue.Str(fieldKnownKeys))
	pathTypedParts              = cue.MakePath(cue.Str(fieldTypedParts))
	pathServerManaged           = cue.MakePath(cue.Str(fieldServerManaged))
	pathClusterTrainingRuntimes = cue.MakePath(cue.Str(fieldClusterTrainingRuntimes))
	pathFrameworks              = cue.MakePath(cue.Str(fieldFrameworks))
	pathRuntimeKinds            = cue.MakePath(cue.Str(fieldRuntimeKinds))

	// A crds entry.
	pathCRDSchema         = cue.MakePath(cue.Str("schema"))
	pathCRDGroup          = cue.MakePath(cue.Str("group"))
	pathCRDVersion        = cue.MakePath(cue.Str("version"))
	pathCRDStatus         = cue.MakePath(cue.Str("status"))
	pathCRDScope          = cue.MakePath(cue.Str("scope"))
	pathCRDPrinterColumns = cue.MakePath(cue.Str("printerColumns"))
	// A crds entry's scope for a kind without a namespace.
	crdScopeCluster = "Cluster"

	// A plans entry's and a lookups entry's input paths they read (the
	// engine gives them only those).
	pathReads = cue.MakePath(cue.Str("reads"))
	// What of the request each mutation of a mutator needs (#Mutator.needs).
	pathNeeds = cue.MakePath(cue.Str("needs"))
	// The paths a lookups entry reads on an UPDATE alone.
	pathUpdateReads = cue.MakePath(cue.Str("updateReads"))

	// A crdCheckParts entry's path, and the indexes of its "*" items.
	pathCRDPartPath = cue.MakePath(cue.Str("path"))
	pathCRDPartAt   = cue.MakePath(cue.Str(fieldAt))

	// A carried entry's path and the constraint its values meet.
	pathCarriedPath  = cue.MakePath(cue.Str("path"))
	pathCarriedValue = cue.MakePath(cue.Str("value"))
	pathCarriedCarry = cue.MakePath(cue.Str("carry"))

	// A plans entry's context.
	pathPlanRuntime = cue.MakePath(cue.Str(fieldContext), cue.Str(fieldRuntime))
	pathPlanMerged  = cue.MakePath(cue.Str(fieldContext), cue.Str("merged"))

	// A declaredChecks entry's quantities (context.quantities).
	pathDeclaredQuantities = cue.MakePath(cue.Str(fieldContext), cue.Str(fieldQuantities))

	// A review's object, input, findings by phase, warnings and summary.
	pathObject = cue.MakePath(cue.Str(fieldObject))
	// A review's object's name.
	pathObjectName = cue.MakePath(cue.Str(fieldObject), cue.Str("metadata"), cue.Str("name"))
	pathInput      = cue.MakePath(cue.Str(fieldInput))
	pathReview     = map[Phase]cue.Path{
		PhaseCRD:     cue.MakePath(cue.Str(string(PhaseCRD))),
		PhaseWebhook: cue.MakePath(cue.Str(string(PhaseWebhook))),
		PhasePolicy:  cue.MakePath(cue.Str(string(PhasePolicy))),
	}
	pathReviewWarnings = cue.MakePath(cue.Str("warnings"))
	pathReviewSummary  = cue.MakePath(cue.Str("summary"))

	// A mutator's mutations.
	pathMutations = cue.MakePath(cue.Str("mutations"))

	// A lookups entry's references.
	pathLookupRuntime  = cue.MakePath(cue.Str(fieldRuntime))
	pathLookupObjects  = cue.MakePath(cue.Str("objects"))
	pathLookupExisting = cue.MakePath(cue.Str("existing"))
	// A lookup's kind and group (#RuntimeLookup).
	selLookupKind  = cue.Str("kind")
	selLookupGroup = cue.Str("group")

	// A render's (and a plan's) outputs.
	pathErrors   = cue.MakePath(cue.Str("errors"))
	pathWarnings = cue.MakePath(cue.Str("warnings"))
	pathObjects  = cue.MakePath(cue.Str("objects"))
	pathBases    = cue.MakePath(cue.Str("bases"))
	pathEdits    = cue.MakePath(cue.Str("edits"))
	pathGenerate = cue.MakePath(cue.Str("generate"))
	pathSums     = cue.MakePath(cue.Str("sums"))
	pathOps      = cue.MakePath(selOps)
	pathOrder    = cue.MakePath(cue.Str("order"))
	pathMetadata = cue.MakePath(cue.Str("metadata"))
	// An object's name.
	pathMetadataName = cue.MakePath(cue.Str("metadata"), cue.Str("name"))
	pathParts        = cue.MakePath(cue.Str(fieldParts))
	pathPlanOps      = cue.MakePath(cue.Str("ops"))
	pathController   = cue.MakePath(cue.Str("controller"))

	// A probes entry: the runtime the engine fills, the documents it
	// admits and renders.
	pathProbeRuntime   = cue.MakePath(cue.Str(fieldRuntime))
	pathProbeDocuments = cue.MakePath(cue.Str("documents"))
	pathProbeVariants  = cue.MakePath(cue.Str("variants"))
	pathProbeFollows   = cue.MakePath(cue.Str("follows"))

	// A document written in CUE: an object has a kind.
	pathKind = cue.MakePath(cue.Str("kind"))
)

// Selectors for paths with parts the engine knows only at run time.
var (
	selAdmission   = cue.Str(fieldAdmission)
	selFrameworks  = cue.Str(fieldFrameworks)
	selCRDs        = cue.Str(fieldCRDs)
	selPlans       = cue.Str(fieldPlans)
	selParts       = cue.Str(fieldParts)
	selRender      = cue.Str(fieldRender)
	selRenderParts = cue.Str(fieldRenderParts)
	selObject      = cue.Str(fieldObject)
	selMLPolicy    = cue.Def(fieldMLPolicy)
	selContextDef  = cue.Def(fieldContextDef)
	selObjects     = cue.Str("objects")
	selExisting    = cue.Str("existing")
	selEdits       = cue.Str("edits")
	selOps         = cue.Str("ops")
	selValue       = cue.Str("value")
	selItems       = cue.Str("items")
	// A frameworks entry's label values.
	selFrameworkLabels = cue.Str("labels")
	selGenerate        = cue.Str("generate")
	selSums            = cue.Str("sums")
	selBases           = cue.Str("bases")
	selMutations       = cue.Str("mutations")
	selMutators        = cue.Str(fieldMutators)
	selUpdateReads     = pathUpdateReads.Selectors()[0]
	// selNeedsRenderPart is a framework's registry entry's: whether the
	// framework must have a render part of its name.
	selNeedsRenderPart = cue.Str("needsRenderPart")
)

// Phase says which check produced a finding. The review's blocks of
// findings are named after theirs (crd, webhook, policy: pathReview); the
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
type lookupRef struct {
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

// rawFinding is a finding as the CUE writes it (#FieldError, #Warning).
type rawFinding struct {
	Path      *string         `json:"path"`
	Type      *string         `json:"type"`
	Value     json.RawMessage `json:"value"`
	Supported []string        `json:"supported"`
	Detail    string          `json:"detail"`
	Message   string          `json:"message"`
}

type base struct{ Path, From []string }

type editGroup struct {
	Name  string
	Order int
	Ops   []edit
}

// edit is one #Edit of the CUE.
type edit struct {
	// Use names a plan's op (#ops) that gives the fields the edit leaves out.
	Use    string
	Object string
	Path   []any
	Op     string
	Value  any
	Items  []any
	By     []string
}

// quantitySum is one #QuantitySum of the CUE.
type quantitySum struct {
	Object string
	Path   []string
	Terms  []struct {
		Resource string
		Quantity string
		Times    int64
	}
}

// merge is one strategic merge a render needs (#merges in the CUE).
type merge struct {
	Base      []string
	Patches   []string
	Schema    string
	KeepOrder []string
}

// generate is one #Generate of the CUE: data the CUE cannot make.
type generate struct {
	Path       []string
	Kind       string
	PrivateKey string
	PublicKey  string
	Key        string
	From       string
	Seed       string
	SeedFrom   *string
	Encoding   string
	Text       string
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

// editOps are the ops an edit makes (#Edit; edit.apply).
var editOps = []string{"set", "merge", "upsert", "append"}
