{{/*
Object names are fixed: they are what the webhook's defaults (--certs-secret,
--webhook-configuration, --service-name, the Lease) and the kustomize manifests use.
*/}}
{{- define "confighash.name" -}}confighash{{- end -}}

{{/* The one label selectors use (as in manifests/): it never changes across upgrades. */}}
{{- define "confighash.selectorLabels" -}}
app.kubernetes.io/name: {{ include "confighash.name" . }}
{{- end -}}

{{/* The webhook's part (app.kubernetes.io/component), as the kustomize manifests label it:
on its objects and its pod template, never in a selector. */}}
{{- define "confighash.componentLabels" -}}
app.kubernetes.io/component: webhook
{{- end -}}

{{/* Object labels: the selector label, the component, what Helm charts conventionally add,
then global.commonLabels. */}}
{{- define "confighash.labels" -}}
{{ include "confighash.selectorLabels" . }}
{{ include "confighash.componentLabels" . }}
{{ include "confighash.helmLabels" . }}
{{- end -}}

{{- define "confighash.helmLabels" -}}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- with (.Values.global).commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}


{{/*
Follow mode's Deployment and ServiceAccount (follow.enabled): their own name, and their own
selector label, so that the webhook's Service and selectors never match the follower's pods.
*/}}
{{/* The one webhook of the MutatingWebhookConfiguration: the apiserver's metrics name it. */}}
{{- define "confighash.webhookName" -}}hash.confighash.dev{{- end -}}

{{- define "confighash.follow.name" -}}confighash-follow{{- end -}}

{{- define "confighash.follow.selectorLabels" -}}
app.kubernetes.io/name: {{ include "confighash.follow.name" . }}
{{- end -}}

{{- define "confighash.follow.componentLabels" -}}
app.kubernetes.io/component: follow
{{- end -}}

{{- define "confighash.follow.labels" -}}
{{ include "confighash.follow.selectorLabels" . }}
{{ include "confighash.follow.componentLabels" . }}
{{ include "confighash.helmLabels" . }}
{{- end -}}

{{/*
The ServiceAccounts' names (serviceAccount.name, follow.serviceAccount.name), the one
owner of each: the pods run as it, every binding names it, and the fences match its
username, so a renamed (or pre-created) ServiceAccount is still bound and still fenced.
*/}}
{{- define "confighash.serviceAccountName" -}}
{{- .Values.serviceAccount.name | default (include "confighash.name" .) -}}
{{- end -}}

{{- define "confighash.follow.serviceAccountName" -}}
{{- .Values.follow.serviceAccount.name | default (include "confighash.follow.name" .) -}}
{{- end -}}

{{- define "confighash.follow.serviceAccountSubject" -}}
- kind: ServiceAccount
  name: {{ include "confighash.follow.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{/* The follower's ServiceAccount as a request's userInfo names it: what its fence matches. */}}
{{- define "confighash.follow.serviceAccountUsername" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "confighash.follow.serviceAccountName" . }}
{{- end -}}

{{- define "confighash.serviceAccountSubject" -}}
- kind: ServiceAccount
  name: {{ include "confighash.serviceAccountName" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{/*
The serving ServiceAccount as the apiserver names it in a request's userInfo: what the
fences (webhook-fence-self-managed.yaml, secret-fence.yaml) match. Its one owner in the chart.
*/}}
{{- define "confighash.serviceAccountUsername" -}}
system:serviceaccount:{{ .Release.Namespace }}:{{ include "confighash.serviceAccountName" . }}
{{- end -}}

{{/*
webhook.clientAuth: /mutate's port requires the apiserver's client certificate, so the
probes, /metrics and Prometheus use the port `probes` (8444), which asks for none.
*/}}
{{- define "confighash.probePort" -}}
{{- if .Values.webhook.clientAuth.enabled }}probes{{ else }}https{{ end -}}
{{- end -}}

{{/* podLabels as YAML; never the selector label, which would move the pods out of their
Deployment's selector (and the Service's). */}}
{{- define "confighash.podLabels" -}}
{{- if hasKey .Values.podLabels "app.kubernetes.io/name" -}}
{{- fail "podLabels may not set app.kubernetes.io/name: it is the selector label of both Deployments" -}}
{{- end -}}
{{- with .Values.podLabels }}{{ toYaml . }}{{ end -}}
{{- end }}

{{/* repository@digest when a digest is pinned (a released chart), else repository:tag;
global.imageRegistry, when set, replaces the repository's registry: its first path segment when
that names a host (a dot, a port or localhost, as Docker tells), else it is put in front. */}}
{{- define "confighash.image" -}}
{{- $repository := .Values.image.repository -}}
{{- with (.Values.global).imageRegistry -}}
{{- $repository = printf "%s/%s" (trimSuffix "/" .) (regexReplaceAll "^([^/]*[.:][^/]*|localhost)/" $repository "") -}}
{{- end -}}
{{- if .Values.image.digest -}}
{{ $repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ $repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The port the webhook listens on (webhook.port): the container's, the Service's targetPort. */}}
{{- define "confighash.port" -}}
{{- .Values.webhook.port | int -}}
{{- end -}}

{{/* A probe: the chart's defaults merged under probes.<name> (what you set wins). */}}
{{- define "confighash.probe" -}}
{{- $probe := mergeOverwrite (deepCopy .defaults) (index .root.Values.probes .name) -}}
{{- toYaml $probe -}}
{{- end -}}

{{/* The serving certificate comes from a mounted Secret (certManager, existingSecret). */}}
{{- define "confighash.mountsCertificate" -}}
{{- if ne .Values.certificates.mode "selfManaged" }}true{{ end -}}
{{- end -}}

{{- define "confighash.servingSecretName" -}}
{{- if eq .Values.certificates.mode "certManager" -}}confighash-serving-cert
{{- else -}}{{ required "certificates.existingSecret.name is required with certificates.mode=existingSecret" .Values.certificates.existingSecret.name }}
{{- end -}}
{{- end -}}

{{/*
The opt-in workload kinds turned on (kinds.*), each as the kustomize component of the
same name adds it: the --kind flag, a webhook rule, and (with follow.enabled) follow mode's
rules for it in its ClusterRole.
*/}}
{{- define "confighash.kinds" -}}
{{- $kinds := list -}}
{{- if .Values.kinds.argoRollouts -}}
{{- $kinds = append $kinds (dict "component" "argo-rollouts" "group" "argoproj.io" "versions" (list (dict "version" "v1alpha1" "kind" "Rollout" "resource" "rollouts"))) -}}
{{- end -}}
{{- if .Values.kinds.openKruise -}}
{{- $kinds = append $kinds (dict "component" "openkruise" "group" "apps.kruise.io" "versions" (list (dict "version" "v1alpha1" "kind" "CloneSet" "resource" "clonesets") (dict "version" "v1beta1" "kind" "StatefulSet" "resource" "statefulsets"))) -}}
{{- end -}}
{{- toJson $kinds -}}
{{- end }}

{{/* A --kind flag per opt-in kind, as a JSON list: serve and follow take the same. */}}
{{- define "confighash.kindArgs" -}}
{{- $args := list -}}
{{- range (include "confighash.kinds" . | fromJsonArray) -}}
{{- $group := .group -}}
{{- range .versions -}}
{{- $args = append $args (printf "--kind=%s/%s/%s" $group .version .kind) -}}
{{- end -}}
{{- end -}}
{{- toJson $args -}}
{{- end }}

{{/* The container's args: a --kind flag per opt-in kind, an --excluded-namespace per
webhook.excludedNamespaces (the webhook's own namespace check, as its selector), then extraArgs. */}}
{{- define "confighash.args" -}}
{{- $args := include "confighash.kindArgs" . | fromJsonArray -}}
{{- range .Values.webhook.excludedNamespaces -}}
{{- $args = append $args (printf "--excluded-namespace=%s" .) -}}
{{- end -}}
{{- $all := concat $args .Values.extraArgs -}}
{{- if $all }}{{ toJson $all }}{{ else }}[]{{ end -}}
{{- end }}

{{/* confighash-follow's args: the same --kind and --excluded-namespace flags (it follows
nowhere the webhook never hashes), --watch-scope=namespace with rbac.namespaced (its RBAC is
bound per namespace then), then follow.extraArgs. */}}
{{- define "confighash.follow.args" -}}
{{- $args := include "confighash.kindArgs" . | fromJsonArray -}}
{{- range .Values.webhook.excludedNamespaces -}}
{{- $args = append $args (printf "--excluded-namespace=%s" .) -}}
{{- end -}}
{{- if .Values.rbac.namespaced -}}
{{- $args = append $args "--watch-scope=namespace" -}}
{{- end -}}
{{- $all := concat $args .Values.follow.extraArgs -}}
{{- if $all }}{{ toJson $all }}{{ else }}[]{{ end -}}
{{- end }}

{{/* The namespaces confighash-follow never follows, as a JSON list: kube-system, the release's,
and every --excluded-namespace its args carry (webhook.excludedNamespaces, and any in
follow.extraArgs) or its environment (CONFIGHASH_EXCLUDED_NAMESPACES in extraEnv): the follower's
fence (follow-fence.yaml) refuses its writes there, so the two lists are one. */}}
{{- define "confighash.follow.excludedNamespaces" -}}
{{- $namespaces := list "kube-system" .Release.Namespace -}}
{{- $next := false -}}
{{- range (include "confighash.follow.args" . | fromJsonArray) -}}
{{- if $next -}}
{{- $namespaces = append $namespaces . -}}
{{- $next = false -}}
{{- else if eq . "--excluded-namespace" -}}
{{- $next = true -}}
{{- else if hasPrefix "--excluded-namespace=" . -}}
{{- $namespaces = append $namespaces (trimPrefix "--excluded-namespace=" .) -}}
{{- end -}}
{{- end -}}
{{- range .Values.extraEnv -}}
{{- if and (eq .name "CONFIGHASH_EXCLUDED_NAMESPACES") .value -}}
{{- range splitList "," .value -}}
{{- if trim . }}{{ $namespaces = append $namespaces (trim .) }}{{ end -}}
{{- end -}}
{{- end -}}
{{- end -}}
{{- $namespaces | uniq | toJson -}}
{{- end }}

{{/* Each Deployment runs as a ServiceAccount of its own. The serving pods answer any pod that
reaches the Service: sharing the follower's account would hand them its rights (list every
Secret, patch every workload), and `default` is every other pod's of the namespace too. */}}
{{- define "confighash.checkServiceAccounts" -}}
{{- $serving := include "confighash.serviceAccountName" . -}}
{{- $follow := include "confighash.follow.serviceAccountName" . -}}
{{- if eq $serving "default" -}}
{{- fail "serviceAccount.name may not be \"default\": every pod of the namespace runs as it, and the webhook's rights would be theirs; name one of its own" -}}
{{- end -}}
{{- if .Values.follow.enabled -}}
{{- if eq $follow "default" -}}
{{- fail "follow.serviceAccount.name may not be \"default\": every pod of the namespace runs as it, and the follower's rights would be theirs; name one of its own" -}}
{{- end -}}
{{- if eq $serving $follow -}}
{{- fail (printf "serviceAccount.name and follow.serviceAccount.name are both %q: the serving pods, which any pod that reaches the Service can talk to, would hold the follower's rights; give each Deployment its own" $serving) -}}
{{- end -}}
{{- end -}}
{{- end }}

{{/* Both PodDisruptionBudgets' budget: maxUnavailable when set, else minAvailable; never both
(the apiserver refuses a PodDisruptionBudget with both). */}}
{{- define "confighash.disruptionBudget" -}}
{{- $budget := .Values.podDisruptionBudget -}}
{{- $max := not (kindIs "invalid" $budget.maxUnavailable) -}}
{{- $min := not (kindIs "invalid" $budget.minAvailable) -}}
{{- if and $max $min -}}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable, not both (the other null)" -}}
{{- else if $max -}}
maxUnavailable: {{ $budget.maxUnavailable }}
{{- else if $min -}}
minAvailable: {{ $budget.minAvailable }}
{{- else -}}
{{- fail "podDisruptionBudget: set minAvailable or maxUnavailable" -}}
{{- end -}}
{{- end }}

{{/* replicaCount, or the deprecated `replicas` when it is set (it wins, as it did). */}}
{{- define "confighash.replicaCount" -}}
{{- if kindIs "invalid" .Values.replicas }}{{ .Values.replicaCount }}{{ else }}{{ .Values.replicas }}{{ end -}}
{{- end }}

{{/* Both containers' securityContext: containerSecurityContext, with the deprecated
`securityContext` merged over it (what you set there wins, field by field). */}}
{{- define "confighash.containerSecurityContext" -}}
{{- $context := deepCopy .Values.containerSecurityContext -}}
{{- with .Values.securityContext }}{{ $context = mergeOverwrite $context (deepCopy .) }}{{ end -}}
{{- toYaml $context -}}
{{- end }}

{{/* nameOverride: refused. Every object name is a contract: serve's defaults
(--certs-secret, --webhook-configuration, the Lease), the fences' CEL and the kustomize
manifests name them, one installation per cluster. */}}
{{- define "confighash.checkNameOverride" -}}
{{- if .Values.nameOverride -}}
{{- fail "nameOverride is not supported: confighash's object names are fixed (the webhook's defaults, its fences and the kustomize manifests name them; one installation per cluster)" -}}
{{- end -}}
{{- end }}

{{/* A follower scheduling value (nodeSelector, tolerations, ...): follow.<name>, or the
webhook's <name> when that is null. */}}
{{- define "confighash.follow.scheduling" -}}
{{- $own := index .root.Values.follow .name -}}
{{- if kindIs "invalid" $own }}{{ $own = index .root.Values .name }}{{ end -}}
{{- if $own }}{{ toYaml $own }}{{ end -}}
{{- end }}

{{/* The CA Prometheus verifies the webhook's /metrics with (a ServiceMonitor tlsConfig.ca):
the certificates Secret's bundle (self-managed, where it keeps the CA it rotates from as well),
cert-manager's ca.crt, or a ConfigMap made from certificates.existingSecret.caBundle. */}}
{{- define "confighash.metricsCa" -}}
{{- if eq .Values.certificates.mode "selfManaged" -}}
secret:
  name: confighash-certs
  key: ca-bundle.crt
{{- else if eq .Values.certificates.mode "certManager" -}}
secret:
  name: {{ include "confighash.servingSecretName" . }}
  key: ca.crt
{{- else -}}
configMap:
  name: confighash-metrics-ca
  key: ca.crt
{{- end -}}
{{- end }}

{{/* networkPolicy.egress: the apiserver's ports and DNS (networkpolicy.yaml). */}}
{{- define "confighash.networkPolicyEgress" -}}
egress:
  # The apiserver: its address (behind the `kubernetes` Service, which policies see after
  # the address is translated) differs by cluster; its ports do not.
  - ports:
      {{- range .apiServerPorts }}
      - port: {{ . }}
        protocol: TCP
      {{- end }}
  # DNS: cloud credential plugins (IRSA, Workload Identity) resolve their endpoints.
  - ports:
      - port: 53
        protocol: UDP
      - port: 53
        protocol: TCP
{{- end }}
