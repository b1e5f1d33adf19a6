{{/* The chart's name. */}}
{{- define "gatepost.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release-qualified name the chart's objects share. */}}
{{- define "gatepost.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "gatepost.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Labels of every object. */}}
{{- define "gatepost.labels" -}}
helm.sh/chart: {{ include "gatepost.chart" . }}
{{ include "gatepost.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "gatepost.selectorLabels" -}}
app.kubernetes.io/name: {{ include "gatepost.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/* Selector labels of one component: include with (dict "ctx" $ "component" "ingress"). */}}
{{- define "gatepost.componentSelectorLabels" -}}
{{ include "gatepost.selectorLabels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "gatepost.componentLabels" -}}
{{ include "gatepost.labels" .ctx }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "gatepost.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{- define "gatepost.secretName" -}}
{{- default (include "gatepost.fullname" .) .Values.existingSecret }}
{{- end }}

{{- define "gatepost.ingressAppId" -}}
{{- default (printf "%s-ingress" (include "gatepost.fullname" .)) .Values.dapr.ingressAppId }}
{{- end }}

{{- define "gatepost.actorsAppId" -}}
{{- default (printf "%s-actors" (include "gatepost.fullname" .)) .Values.dapr.actorsAppId }}
{{- end }}

{{- define "gatepost.daprConfigName" -}}
{{- default (include "gatepost.fullname" .) .Values.dapr.configuration.name }}
{{- end }}

{{/* Dapr sidecar annotations both apps share. */}}
{{- define "gatepost.daprAnnotations" -}}
dapr.io/enabled: "true"
dapr.io/config: {{ include "gatepost.daprConfigName" . | quote }}
dapr.io/log-level: {{ .Values.dapr.logLevel | quote }}
dapr.io/block-shutdown-duration: {{ .Values.dapr.blockShutdownDuration | quote }}
dapr.io/graceful-shutdown-seconds: {{ .Values.dapr.gracefulShutdownSeconds | quote }}
{{- with .Values.dapr.sidecar }}
{{- if .cpuRequest }}
dapr.io/sidecar-cpu-request: {{ .cpuRequest | quote }}
{{- end }}
{{- if .cpuLimit }}
dapr.io/sidecar-cpu-limit: {{ .cpuLimit | quote }}
{{- end }}
{{- if .memoryRequest }}
dapr.io/sidecar-memory-request: {{ .memoryRequest | quote }}
{{- end }}
{{- if .memoryLimit }}
dapr.io/sidecar-memory-limit: {{ .memoryLimit | quote }}
{{- end }}
{{- end }}
{{- end }}

{{/* Environment both apps share: the runtime, the secrets, the plain settings. */}}
{{- define "gatepost.commonEnv" -}}
- name: GATEPOST_RUNTIME
  value: dapr
- name: GATEPOST_PUBSUB
  value: {{ .Values.dapr.pubsub.name | quote }}
- name: DATABASE_URL
  valueFrom:
    secretKeyRef:
      name: {{ include "gatepost.secretName" . }}
      key: DATABASE_URL
- name: GATEPOST_ADMIN_TOKEN
  valueFrom:
    secretKeyRef:
      name: {{ include "gatepost.secretName" . }}
      key: GATEPOST_ADMIN_TOKEN
      optional: true
- name: GATEPOST_SMTP_RELAY
  valueFrom:
    secretKeyRef:
      name: {{ include "gatepost.secretName" . }}
      key: GATEPOST_SMTP_RELAY
      optional: true
- name: GATEPOST_HOSTNAME
{{- if .Values.config.hostname }}
  value: {{ .Values.config.hostname | quote }}
{{- else }}
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
{{- end }}
{{- if .Values.config.deliveryRetry }}
- name: GATEPOST_DELIVERY_RETRY
  value: {{ .Values.config.deliveryRetry | quote }}
{{- end }}
{{- with .Values.config.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Pod annotations that roll the pods when the chart's own Secret changes. */}}
{{- define "gatepost.checksumAnnotations" -}}
{{- if not .Values.existingSecret -}}
checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
{{- end }}
{{- end }}

{{/* Redis TLS and password entries of a Dapr component's metadata. */}}
{{- define "gatepost.redisAuth" -}}
- name: enableTLS
  value: {{ .Values.redis.enableTLS | quote }}
{{- with .Values.redis.passwordSecret }}
{{- if .name }}
- name: redisPassword
  secretKeyRef:
    name: {{ .name }}
    key: {{ .key }}
{{- end }}
{{- end }}
{{- end }}

{{/* auth and scopes of a Dapr component. */}}
{{- define "gatepost.componentFooter" }}
{{- if .Values.redis.passwordSecret.name }}
auth:
  secretStore: kubernetes
{{- end }}
scopes:
  - {{ include "gatepost.ingressAppId" . }}
  - {{ include "gatepost.actorsAppId" . }}
{{- end }}
