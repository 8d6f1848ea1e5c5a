/*
 * Test-only: a StorageLockClient for Hudi 1.1's StorageBasedLockProvider on S3, written from the protocol (RFC-91) on
 * the AWS SDK v1 the harness already carries for s3a, because hudi-aws 1.x (where Hudi's own client lives, on SDK v2)
 * is not published. Hudi picks the client by the table's scheme (StorageSchemes: s3/s3a name this class), not by a
 * key, so this class takes that name. Endpoint, region and keys come from the local stack's AWS_* environment.
 * Conditional writes: If-None-Match: * to create, If-Match on the ETag read to replace; 412 means another writer won.
 */
package org.apache.hudi.aws.transaction.lock;

import org.apache.hudi.client.transaction.lock.StorageLockClient;
import org.apache.hudi.client.transaction.lock.models.LockGetResult;
import org.apache.hudi.client.transaction.lock.models.LockUpsertResult;
import org.apache.hudi.client.transaction.lock.models.StorageLockData;
import org.apache.hudi.client.transaction.lock.models.StorageLockFile;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.common.util.collection.Pair;

import com.amazonaws.AmazonServiceException;
import com.amazonaws.auth.AWSStaticCredentialsProvider;
import com.amazonaws.auth.BasicAWSCredentials;
import com.amazonaws.client.builder.AwsClientBuilder;
import com.amazonaws.services.s3.AmazonS3;
import com.amazonaws.services.s3.AmazonS3ClientBuilder;
import com.amazonaws.services.s3.model.ObjectMetadata;
import com.amazonaws.services.s3.model.PutObjectRequest;
import com.amazonaws.services.s3.model.PutObjectResult;
import com.amazonaws.services.s3.model.S3Object;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Properties;

public class S3StorageLockClient implements StorageLockClient {
  private final AmazonS3 s3;
  private final String bucket;
  private final String key;

  public S3StorageLockClient(String ownerId, String lockFileUri, Properties props) {
    Pair<String, String> bucketAndKey = StorageLockClient.parseBucketAndPath(lockFileUri);
    this.bucket = bucketAndKey.getLeft();
    this.key = bucketAndKey.getRight();
    String endpoint = env("AWS_ENDPOINT_URL_S3", env("AWS_ENDPOINT_URL", null));
    String region = env("AWS_REGION", "us-east-1");
    AmazonS3ClientBuilder builder = AmazonS3ClientBuilder.standard()
        .withPathStyleAccessEnabled(true)
        .withCredentials(new AWSStaticCredentialsProvider(
            new BasicAWSCredentials(env("AWS_ACCESS_KEY_ID", ""), env("AWS_SECRET_ACCESS_KEY", ""))));
    if (endpoint == null) {
      builder.withRegion(region);
    } else {
      builder.withEndpointConfiguration(new AwsClientBuilder.EndpointConfiguration(endpoint, region));
    }
    this.s3 = builder.build();
  }

  private static String env(String name, String fallback) {
    String value = System.getenv(name);
    return value == null || value.isEmpty() ? fallback : value;
  }

  private static String quoted(String etag) {
    return etag.startsWith("\"") ? etag : "\"" + etag + "\"";
  }

  @Override
  public Pair<LockGetResult, Option<StorageLockFile>> readCurrentLockFile() {
    try (S3Object object = s3.getObject(bucket, key)) {
      String etag = object.getObjectMetadata().getETag();
      return Pair.of(LockGetResult.SUCCESS, Option.of(StorageLockFile.createFromStream(object.getObjectContent(), etag)));
    } catch (AmazonServiceException e) {
      if (e.getStatusCode() == 404) {
        return Pair.of(LockGetResult.NOT_EXISTS, Option.empty());
      }
      if (e.getStatusCode() == 409 || e.getStatusCode() == 429 || e.getStatusCode() >= 500) {
        return Pair.of(LockGetResult.UNKNOWN_ERROR, Option.empty());
      }
      throw e;
    } catch (IOException e) {
      throw new UncheckedIOException("reading the lock file " + key, e);
    }
  }

  @Override
  public Pair<LockUpsertResult, Option<StorageLockFile>> tryUpsertLockFile(StorageLockData data, Option<StorageLockFile> previous) {
    byte[] bytes = StorageLockFile.toByteArray(data);
    ObjectMetadata metadata = new ObjectMetadata();
    metadata.setContentLength(bytes.length);
    metadata.setContentType("application/json");
    PutObjectRequest request = new PutObjectRequest(bucket, key, new ByteArrayInputStream(bytes), metadata);
    if (previous.isPresent()) {
      request.putCustomRequestHeader("If-Match", quoted(previous.get().getVersionId()));
    } else {
      request.putCustomRequestHeader("If-None-Match", "*");
    }
    try {
      PutObjectResult result = s3.putObject(request);
      return Pair.of(LockUpsertResult.SUCCESS, Option.of(new StorageLockFile(data, result.getETag())));
    } catch (AmazonServiceException e) {
      if (e.getStatusCode() == 412) {
        return Pair.of(LockUpsertResult.ACQUIRED_BY_OTHERS, Option.empty());
      }
      return Pair.of(LockUpsertResult.UNKNOWN_ERROR, Option.empty());
    }
  }

  @Override
  public Option<String> readObject(String filePath, boolean checkExistsFirst) {
    Pair<String, String> bucketAndKey = StorageLockClient.parseBucketAndPath(filePath);
    try {
      return Option.of(s3.getObjectAsString(bucketAndKey.getLeft(), bucketAndKey.getRight()));
    } catch (AmazonServiceException e) {
      return Option.empty();
    }
  }

  @Override
  public boolean writeObject(String filePath, String content) {
    Pair<String, String> bucketAndKey = StorageLockClient.parseBucketAndPath(filePath);
    try {
      s3.putObject(bucketAndKey.getLeft(), bucketAndKey.getRight(), content);
      return true;
    } catch (AmazonServiceException e) {
      return false;
    }
  }

  @Override
  public void close() {
    s3.shutdown();
  }
}
