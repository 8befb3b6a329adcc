{{/*
Object names are fixed: they are what the webhook's defaults (--certs-secret,
--webhook-configuration, --service-name, the Lease) and the kustomize manifests use.
*/}}
{{- define "confighash.name" -}}confighash{{- end -}}

{{/* The one label selectors use (as in manifests/): it never changes across upgrades. */}}
{{- define "confighash.selectorLabels" -}}
app.kubernetes.io/name: {{ include "confighash.name" . }}
{{- end -}}

{{/* Object labels: the selector label plus what Helm charts conventionally add. */}}
{{- define "confighash.labels" -}}
{{ include "confighash.selectorLabels" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "confighash.serviceAccountSubject" -}}
- kind: ServiceAccount
  name: {{ include "confighash.name" . }}
  namespace: {{ .Release.Namespace }}
{{- end -}}

{{- define "confighash.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
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
