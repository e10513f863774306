// Package controller is the Redis operator as of chapter 11, "admission":
// chapter 10's operator, which now also refuses bad Redis objects before
// they are stored. The CRD's CEL rules (crd/) check what one object says;
// the validating webhook of redis_webhook.go checks what CEL cannot see,
// other objects: the pods whose names a new Redis needs.
//
// Every chapter directory holds a complete copy of the controller package,
// so that `diff` between two chapters shows exactly one lesson.
//
// +kubebuilder:webhookconfiguration:mutating=false,name=redis-operator-validating-webhook
package controller
