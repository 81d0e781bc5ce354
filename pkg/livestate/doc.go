// Package livestate reads what the cluster says of a run, the one reading
// that the executor (`deployctl deploy|validate|teardown`) and insight
// (`deployctl status|explain`) share:
//
//	workflow.go     a Workflow's task nodes, their attempts and step results
//	application.go  an Argo CD Application's status
package livestate
