# The table of chapters (the course's chapters/chapters.go) for Make.
# Generated; do not edit. Each variable but the first two and the
# last lists chapter numbers; LANES lists ranges of them.
CHAPTER_NAMES := 01-create-pods 02-finalizer-tracking 03-owner-references 04-watch-pod-deletes 05-rebuild-pods 06-scale-and-status 07-idiomatic 08-own-pods 09-at-scale 10-in-cluster 11-admission 12-crash-every-write 13-cache-behind 14-apiserver-away 15-under-the-hood
SHIPPED_CHAPTER := 14
REWRITES := 15
IN_CLUSTER_CHAPTERS := 10 11 12 13 14
WEBHOOK_CHAPTERS := 11 12 13 14
FAULTS_CHAPTERS := 12 13 14
PROVED_BY_MUTANTS := 12 13 14
API_SERVER_RUNG_CHAPTERS := 2 4
TOO_LOW_CHAPTERS := 3
FAKE_CLIENT_MISSES_CHAPTERS := 1
DEPLOYED_CHAPTERS := 10 11
BENCH_CHECK_CHAPTERS := 2 5
LANES := 1-8 9-15
